export { escapeHtml } from './forms/forms.html.js';
export { listGroupVersions } from './forms/forms.repository.js';
export { contactOfConfirmation, workspaceOfConfirmation } from './submissions/submissions.repository.js';
