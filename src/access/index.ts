// The Access context's face (docs/architecture.md): the workspace and its settings, read by the contexts above.
export { getWorkspace } from './workspaces/workspaces.repository.js';
export { type Locale, TrackingSchema } from './workspaces/workspaces.schemas.js';
