import type { Db } from '../db/connection.js';

/** STUB: filled in by the contacts feature. */
export class ContactsService {
  constructor(readonly db: Db) {}
}
