import type { Db } from '../db/connection.js';

/** STUB: filled in by the segments feature. */
export class SegmentsService {
  constructor(readonly db: Db) {}
}
