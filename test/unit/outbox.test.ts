import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneOutbox } from '../../src/mail/outbox.js';

describe('pruneOutbox', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const now = Date.parse('2026-11-24T12:00:00Z');
  function outbox(files: [name: string, ageDays: number][]): string {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-'));
    dirs.push(dir);
    for (const [name, age] of files) {
      writeFileSync(join(dir, name), 'x');
      const t = (now - age * 86_400_000) / 1000;
      utimesSync(join(dir, name), t, t);
    }
    return dir;
  }

  it('removes .eml files older than the retention, and the oldest beyond the file limit; other files stay', async () => {
    const dir = outbox([
      ['a.eml', 0.1],
      ['b.eml', 1],
      ['c.eml', 2],
      ['old.eml', 8],
      ['older.eml', 30],
      ['notes.txt', 100],
    ]);
    expect(await pruneOutbox(dir, { days: 7, maxFiles: 2 }, now)).toBe(3);
    expect(readdirSync(dir).sort()).toEqual(['a.eml', 'b.eml', 'notes.txt']);
  });

  it('keeps everything within both limits', async () => {
    const dir = outbox([
      ['a.eml', 1],
      ['b.eml', 6.9],
    ]);
    expect(await pruneOutbox(dir, { days: 7, maxFiles: 10 }, now)).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['a.eml', 'b.eml']);
  });

  it('an outbox that does not exist yet is nothing to do', async () => {
    expect(await pruneOutbox(join(tmpdir(), 'no-such-outbox-dir-xyz'), { days: 7, maxFiles: 10 }, now)).toBe(0);
  });
});
