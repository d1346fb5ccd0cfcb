import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The context map (docs/architecture.md) is enforced by lint, not by prose: these imports, written into a file of
 * src/, must fail `npm run lint` with the rule's own message; the allowed ones must pass.
 */
const root = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

async function lint(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('context boundaries (ESLint no-restricted-imports)', () => {
  it.each([
    [
      "another context's repository",
      'src/sending/broadcasts/x.ts',
      "import { getContact } from '../../audience/contacts/contacts.repository.js';",
      /through its face/,
    ],
    [
      "another context's service, past its face",
      'src/integrations/automations/x.ts',
      "import { BroadcastsService } from '../../sending/broadcasts/broadcasts.service.js';",
      /through its face/,
    ],
    [
      'a context above on the map, even through its face',
      'src/audience/contacts/x.ts',
      "import { recordOutcome } from '../../sending/index.js';",
      /sits below/,
    ],
    [
      'plumbing importing a feature',
      'src/mail/x.ts',
      "import { classify } from '../sending/bounces/bounces.service.js';",
      /Plumbing .* imports no feature/,
    ],
    [
      'plumbing importing a face',
      'src/pages/x.ts',
      "import type { Locale } from '../access/index.js';",
      /Plumbing .* imports no feature/,
    ],
    [
      'a context importing the composition root',
      'src/forms/submissions/x.ts',
      "import type { AppConfig } from '../../config.js';",
      /composition root/,
    ],
    [
      'a context importing the jobs',
      'src/outbox/events/x.ts',
      "import { startJobs } from '../../jobs/jobs.js';",
      /composition root/,
    ],
  ])('refuses %s', async (_what, file, code, message) => {
    const messages = await lint(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ["a lower context's face", 'src/sending/broadcasts/x.ts', "import { getContact } from '../../audience/index.js';"],
    [
      'a sibling feature of the same context, repository included',
      'src/audience/segments/x.ts',
      "import { getContact } from '../contacts/contacts.repository.js';",
    ],
    ['plumbing from a feature', 'src/audience/contacts/x.ts', "import { newId } from '../../lib/ids.js';"],
    [
      'any context from the composition root',
      'src/jobs/x.ts',
      "import { SqlDeliveryStore } from '../sending/deliveries/sql-store.js';",
    ],
  ])('allows %s', async (_what, file, code) => {
    expect(await lint(file, code)).toEqual([]);
  });
});

describe('the console imports no server source', () => {
  it.each([
    ['a page', 'console/src/pages/x.tsx', "import { themeCss } from '../../../src/forms/forms/forms.html.js';"],
    [
      'a page in a folder of its own',
      'console/src/pages/FormEditor/x.tsx',
      "import type { Filter } from '../../../../src/audience/index.js';",
    ],
    ['the entry point', 'console/src/x.ts', "import { SCOPES } from '../../src/http/scopes';"],
  ])('refuses an import of src/ from %s', async (_what, file, code) => {
    const messages = await lint(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/The console imports no server source/);
  });

  it.each([
    ['a shared package', 'console/src/components/x.tsx', "import { themeCss } from '@formcast/form-appearance';"],
    ['its own modules', 'console/src/pages/FormEditor/x.tsx', "import { api } from '../../api/client';"],
  ])('allows %s', async (_what, file, code) => {
    expect(await lint(file, code)).toEqual([]);
  });
});

describe('no folder cycles (dependency-cruiser, npm run lint:deps)', () => {
  it('fails on two folders that import each other, with the cycle in the report', { timeout: 120_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-cycles-'));
    try {
      fs.mkdirSync(path.join(dir, 'src/a'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'src/b'), { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }),
      );
      // No module imports itself: a → b/two, b/three → a. Only the folders form a cycle.
      fs.writeFileSync(
        path.join(dir, 'src/a/one.ts'),
        "import { two } from '../b/two.js';\nexport const one = () => two;\n",
      );
      fs.writeFileSync(path.join(dir, 'src/b/two.ts'), 'export const two = 2;\n');
      fs.writeFileSync(
        path.join(dir, 'src/b/three.ts'),
        "import { one } from '../a/one.js';\nexport const three = one;\n",
      );
      const bin = path.join(root, 'node_modules/.bin/depcruise');
      const run = promisify(execFile);
      const failed = await run(
        bin,
        ['src', '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'err'],
        { cwd: dir },
      ).then(
        () => null,
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(failed?.code).not.toBe(0);
      expect(failed?.stdout, failed?.stderr).toMatch(/no-folder-cycles: src\/(a|b)/);
      expect(failed?.stdout).not.toMatch(/no-module-cycles/);
      fs.rmSync(path.join(dir, 'src/b/three.ts'));
      await expect(
        run(bin, ['src', '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd: dir }),
      ).resolves.toBeTruthy();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
