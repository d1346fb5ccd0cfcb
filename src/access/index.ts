export { getWorkspace } from './workspaces/workspaces.repository.js';
export { type Locale, TrackingSchema, type WorkspaceSettings } from './workspaces/workspaces.schemas.js';
