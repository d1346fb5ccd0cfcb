export { insertAutomationMessage } from './broadcasts/broadcasts.repository.js';
export { insertRunDelivery } from './deliveries/deliveries.repository.js';
