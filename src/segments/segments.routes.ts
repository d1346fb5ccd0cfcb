import type { V1 } from '../http/server.js';

/** STUB: filled in by the segments feature. */
export async function segmentsRoutes(_app: V1): Promise<void> {}
