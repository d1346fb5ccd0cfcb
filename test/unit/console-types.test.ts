/**
 * The console's API types (console/src/api/generated/schema.d.ts) are generated from the live OpenAPI document:
 * regenerate them and compare, so an API change that the console has not caught up with fails CI.
 * Fix: `npm run console:types`, then look at what the console's type check (`npm run typecheck`) says.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { generateSchemaTypes, SCHEMA_FILE } from '../../console/scripts/openapi-types.js';

it('console/src/api/generated/schema.d.ts matches the live OpenAPI document (run `npm run console:types` when not)', async () => {
  const fresh = await generateSchemaTypes();
  const checkedIn = fs.readFileSync(SCHEMA_FILE, 'utf8');
  if (fresh !== checkedIn) {
    const a = checkedIn.split('\n');
    const b = fresh.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    expect.fail(
      `console/src/api/generated/schema.d.ts is out of date: it first differs at line ${line + 1}:\n  checked in: ${a[line]?.trim()}\n  generated:  ${b[line]?.trim()}\nRun \`npm run console:types\`.`,
    );
  }
}, 60_000);
