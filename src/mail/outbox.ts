import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The outbox (no SMTP_URL: every message is an `.eml` file) is for development and trials; left alone it grows
 * forever. The worker prunes it: files older than `days`, then the oldest beyond `maxFiles`. Only `.eml` files
 * are touched; a directory that does not exist (yet) is nothing to do. Returns how many files were removed.
 */
export async function pruneOutbox(
  dir: string,
  { days, maxFiles }: { days: number; maxFiles: number },
  now = Date.now(),
): Promise<number> {
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.eml'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const files: { file: string; mtimeMs: number }[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      files.push({ file, mtimeMs: (await fs.stat(file)).mtimeMs });
    } catch {
      // Removed meanwhile.
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs); // newest first
  const cutoff = now - days * 86_400_000;
  let removed = 0;
  for (const [i, f] of files.entries()) {
    if (i < maxFiles && f.mtimeMs >= cutoff) continue;
    try {
      await fs.unlink(f.file);
      removed++;
    } catch {
      // Removed meanwhile.
    }
  }
  return removed;
}
