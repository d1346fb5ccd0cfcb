import type { Db } from '../db/connection.js';

/** STUB: filled in by the topics feature. */
export class TopicsService {
  constructor(readonly db: Db) {}
}
