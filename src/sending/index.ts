// The Sending context's face (docs/architecture.md): what automations may ask of sending, by the owners' own
// functions (broadcasts.writer, deliveries.outcomes), and the transactional email service (docs/emails.md) that the
// SMTP submission server calls.
export { insertAutomationMessage } from './broadcasts/broadcasts.writer.js';
export { insertRunDelivery } from './deliveries/deliveries.outcomes.js';
export { EmailsService, type EmailInput, type SendEmailOptions } from './emails/emails.service.js';
