import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

/**
 * The Dockerfile and compose.yaml (docs/deployment.md), checked without Docker: the test suite runs where no Docker
 * daemon does. What is checked is what would break a deployment quietly: an image that runs as root, has no health
 * check, lacks a file the server reads at run time, or a compose file with a secret written into it or a worker that
 * also serves. Building and running them is described in docs/deployment.md ("How this was tested").
 */
const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, stage by stage (continuation lines joined, comments dropped). */
function stages(text: string): Instruction[][] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const out: Instruction[][] = [[]];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'FROM') out.push([]);
    out.at(-1)!.push({ op: m[1]!, args: m[2]!.trim() });
  }
  return out.filter((s) => s.length > 0 && s[0]!.op === 'FROM');
}

describe('Dockerfile', () => {
  const all = stages(read('Dockerfile'));
  const [build, final] = [all[0]!, all.at(-1)!];
  const ops = (stage: Instruction[], op: string) => stage.filter((i) => i.op === op).map((i) => i.args);

  it('builds in one stage and runs from another, on the same base image', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(ops(build, 'FROM')[0]).toMatch(/^\$\{NODE_IMAGE\} AS build$/);
    expect(ops(final, 'FROM')[0]).toBe('${NODE_IMAGE}');
    // The native modules built in the first stage must meet the same glibc in the second: Debian, not Alpine.
    expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
  });

  it('installs with npm ci from the lock file, builds, and leaves the dev dependencies behind', () => {
    const runs = ops(build, 'RUN').join('\n');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(ops(build, 'COPY').some((c) => c.includes('package-lock.json'))).toBe(true);
    expect(runs).toMatch(/\bnpm run build\b/);
    expect(runs).toMatch(/\bnpm prune --omit=dev\b/);
    // The final stage installs nothing from a registry: it copies what the first one made.
    expect(ops(final, 'RUN').join('\n')).not.toMatch(/\bnpm (ci|install)\b/);
  });

  it('runs as a user other than root, with the health check and the port of the server', () => {
    const users = ops(final, 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const health = ops(final, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toContain('/readyz');
    // …the route the server has (src/app.ts).
    expect(read('src/app.ts')).toContain("app.get('/readyz'");
    expect(ops(final, 'EXPOSE')).toEqual(['3000']);
    expect(ops(final, 'ENV').join(' ')).toMatch(/\bHOST=0\.0\.0\.0\b/);
  });

  it('starts the build of `formcast serve`, and carries every file the build reads at run time', () => {
    expect(JSON.parse(ops(final, 'CMD')[0]!)).toEqual(['node', 'dist/server/cli/main.js', 'serve']);
    expect(read('scripts/build.mjs')).toContain("path.join(src, 'cli/main.ts')");
    const copied = ops(final, 'COPY').map((c) => c.split(/\s+/).at(-1)!.replace(/^\.\//, '').replace(/\/$/, ''));
    for (const needed of ['package.json', 'node_modules', 'dist']) expect(copied).toContain(needed);
    // Files found from the package's root at run time (src/lib/paths.ts): each must be in the image, or under data/
    // (made at run time). paths.ts's own `src` is the sources' twin of dist/server, used only without a build.
    const found = new Set<string>();
    for (const file of fs.readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file === path.join('lib', 'paths.ts')) continue;
      for (const m of read(path.join('src', file)).matchAll(/path\.join\(PACKAGE_ROOT, '([^']+)'/g)) found.add(m[1]!);
    }
    expect(found.size).toBeGreaterThan(0);
    for (const p of found) {
      if (p === 'data' || p.startsWith('data/')) continue;
      expect(
        copied.some((c) => p === c || p.startsWith(`${c}/`)),
        `${p} is read at run time`,
      ).toBe(true);
    }
    // A writable data folder for the user the server runs as.
    expect(ops(final, 'VOLUME').join(' ')).toContain('/app/data');
  });

  it('has a .dockerignore that keeps installed and built output out, and nothing the build needs', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of ['.git', '**/node_modules', 'dist', 'data', '.env']) expect(ignored).toContain(p);
    const needed = [
      'src',
      'scripts',
      'console',
      'packages',
      'bin',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
    ];
    for (const p of needed) {
      expect(fs.existsSync(path.join(root, p)), p).toBe(true);
      expect(ignored, p).not.toContain(p);
    }
  });
});

describe('compose.yaml', () => {
  interface Service {
    image?: string;
    build?: unknown;
    command?: string[];
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test?: string[]; disable?: boolean };
    volumes?: string[];
    deploy?: { replicas?: number };
    profiles?: string[];
  }
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const { postgres, serve, worker } = compose.services;

  it('has PostgreSQL with a health check and a volume, which the Formcast services wait for', () => {
    expect(postgres?.image).toMatch(/postgres:/);
    expect(postgres?.healthcheck?.test).toContain('pg_isready');
    // Checkpoints by time during a large send (docs/scaling.md, "max_wal_size").
    expect(postgres?.command).toEqual(['postgres', '-c', 'max_wal_size=8GB']);
    expect(postgres?.volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    for (const [name, s] of Object.entries(compose.services)) {
      if (name === 'postgres') continue;
      expect(s.depends_on?.postgres?.condition, name).toBe('service_healthy');
      expect(s.environment?.DATABASE_URL, name).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    }
  });

  it('runs one image as a serve that only serves, and as several workers', () => {
    expect(serve?.command?.slice(-1)).toEqual(['serve']);
    expect(serve?.environment?.SERVE_WORKER).toBe('false');
    expect(worker?.command?.slice(-1)).toEqual(['worker']);
    expect(worker?.deploy?.replicas).toBeGreaterThanOrEqual(2);
    expect(worker?.image).toBe(serve?.image);
    expect(serve?.build).toBeDefined();
    // A worker has no HTTP: the image's /readyz check would call it unhealthy.
    expect(worker?.healthcheck?.disable).toBe(true);
    // The same key everywhere (a process with another refuses to start).
    expect(worker?.environment?.SECRET_KEY).toBe(serve?.environment?.SECRET_KEY);
  });

  it('writes no secret: each comes from the environment, and compose refuses to start without it', () => {
    const required = /^\$\{[A-Z_]+:\?[^}]*\}$/;
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (/SECRET|PASSWORD|TOKEN|_KEY$/.test(key)) expect(value, `${name}.${key}`).toMatch(required);
      }
      const url = s.environment?.DATABASE_URL;
      if (url) expect(new URL(url.replace(/\$\{[^}]*\}/g, 'X')).password, `${name}.DATABASE_URL`).toBe('X');
      if (url) expect(url).toMatch(/:\$\{POSTGRES_PASSWORD:\?[^}]*\}@/);
    }
    expect(read('.gitignore').split('\n')).toContain('.env');
  });
});
