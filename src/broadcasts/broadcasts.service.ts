import type { Db } from '../db/connection.js';
import type { AppConfig } from '../http/server.js';

/** STUB: filled in by the broadcasts feature. */
export class BroadcastsService {
  constructor(readonly db: Db, readonly config: AppConfig) {}
}
