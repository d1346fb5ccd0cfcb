// The Sending context's face (docs/architecture.md): what automations may ask of sending, by the owners' own
// functions (broadcasts.writer, deliveries.outcomes).
export { insertAutomationMessage } from './broadcasts/broadcasts.writer.js';
export { insertRunDelivery } from './deliveries/deliveries.outcomes.js';
