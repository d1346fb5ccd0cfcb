export { listGroupVersions } from './forms/forms.repository.js';
export { contactOfConfirmation, workspaceOfConfirmation } from './submissions/submissions.repository.js';
