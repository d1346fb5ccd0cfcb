import type { V1 } from '../http/server.js';

/** STUB: filled in by the templates feature. */
export async function templatesRoutes(_app: V1): Promise<void> {}
