import { expect, it } from 'vitest';
import { describeDatabase } from '../../src/cli/database.js';

it('the database a command names never carries a PostgreSQL password, in the user part or the query', () => {
  expect(describeDatabase('postgres://app:s3cret@db.internal:5432/formcast')).toBe('postgres://app@db.internal:5432/formcast (PostgreSQL)');
  expect(describeDatabase('postgres://app@db.internal/formcast?password=s3cret&sslpassword=k3y&sslmode=require')).toBe('postgres://app@db.internal/formcast (PostgreSQL)');
  expect(describeDatabase(':memory:')).toBe(':memory: (SQLite)');
});
