export { insertAutomationMessage } from './broadcasts/broadcasts.writer.js';
export { insertRunDelivery } from './deliveries/deliveries.outcomes.js';
