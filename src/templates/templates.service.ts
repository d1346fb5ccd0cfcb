import type { Db } from '../db/connection.js';

/** STUB: filled in by the templates feature. */
export class TemplatesService {
  constructor(readonly db: Db) {}
}
