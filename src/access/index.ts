// The Access context's face (docs/architecture.md): the workspace and its settings, read by the contexts above.
export { getWorkspace, workspaceBySlug } from './workspaces/workspaces.repository.js';
export { type Locale, TrackingSchema } from './workspaces/workspaces.schemas.js';
