import type { V1 } from '../http/server.js';

/** STUB: filled in by the contacts feature. */
export async function contactsRoutes(_app: V1): Promise<void> {}
