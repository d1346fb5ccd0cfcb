import { expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeDatabase } from '../../src/cli/database.js';
import { walCheck } from '../../src/cli/commands/doctor.js';

it('the database a command names never carries a PostgreSQL password, in the user part or the query', () => {
  expect(describeDatabase('postgres://app:s3cret@db.internal:5432/formcast')).toBe(
    'postgres://app@db.internal:5432/formcast (PostgreSQL)',
  );
  expect(describeDatabase('postgres://app@db.internal/formcast?password=s3cret&sslpassword=k3y&sslmode=require')).toBe(
    'postgres://app@db.internal/formcast (PostgreSQL)',
  );
  expect(describeDatabase(':memory:')).toBe(':memory: (SQLite)');
});

it('doctor says how much SQLite write-ahead log there is, and warns when it is not being copied back', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-wal-'));
  try {
    const file = path.join(dir, 'formcast.db');
    expect(walCheck(file)).toBeNull();
    fs.writeFileSync(`${file}-wal`, '');
    expect(walCheck(file)).toBeNull();
    fs.truncateSync(`${file}-wal`, 3 * 1024 * 1024);
    expect(walCheck(file)).toEqual({ check: 'SQLite log', status: 'ok', detail: '3.0 MB of write-ahead log' });
    // Sparse: the size is what counts.
    fs.truncateSync(`${file}-wal`, 300 * 1024 * 1024);
    expect(walCheck(file)).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/holds 300\.0 MB: it is not being copied back/),
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
