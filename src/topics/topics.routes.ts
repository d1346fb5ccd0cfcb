import type { V1 } from '../http/server.js';

/** STUB: filled in by the topics feature. */
export async function topicsRoutes(_app: V1): Promise<void> {}
