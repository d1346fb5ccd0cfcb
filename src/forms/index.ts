// The forms context's face (docs/architecture.md): what other contexts may use of forms and submissions. Reads only:
// a form group's versions (automations), and the confirmation a bounce report names (bounces).
export { listGroupVersions } from './forms/forms.repository.js';
export { contactOfConfirmation, workspaceOfConfirmation } from './submissions/submissions.repository.js';
