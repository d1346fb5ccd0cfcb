// The forms context's face (docs/architecture.md): what other contexts may use of forms and submissions: a form group's
// versions (automations), the confirmation a bounce report names (bounces), and the double opt-in confirmation of a
// contact subscribing again from the unsubscribe page (unsubscribe).
export { listGroupVersions } from './forms/forms.repository.js';
export { contactOfConfirmation, workspaceOfConfirmation } from './submissions/submissions.repository.js';
export { openConfirmationSince, requestResubscription } from './submissions/resubscriptions.service.js';
