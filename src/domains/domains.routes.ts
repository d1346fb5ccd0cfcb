import type { V1 } from '../http/server.js';

/** STUB: filled in by the domains feature. */
export async function domainsRoutes(_app: V1): Promise<void> {}
