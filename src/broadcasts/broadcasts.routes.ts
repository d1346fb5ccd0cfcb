import type { V1 } from '../http/server.js';

/** STUB: filled in by the broadcasts feature. */
export async function broadcastsRoutes(_app: V1): Promise<void> {}
