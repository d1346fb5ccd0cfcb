/**
 * The SDK's API types (packages/sdk/src/generated/openapi.d.ts) are generated from the live OpenAPI document: regenerate them
 * and compare, so an API change that the SDK has not caught up with fails CI. Fix: `npm run sdk:types`.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { generateSdkTypes, SDK_TYPES_FILE } from '../../packages/sdk/scripts/openapi-types.js';

it('packages/sdk/src/generated/openapi.d.ts matches the live OpenAPI document (run `npm run sdk:types` when not)', async () => {
  const fresh = await generateSdkTypes();
  const checkedIn = fs.readFileSync(SDK_TYPES_FILE, 'utf8');
  if (fresh !== checkedIn) {
    const a = checkedIn.split('\n');
    const b = fresh.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    expect.fail(
      `packages/sdk/src/generated/openapi.d.ts is out of date: it first differs at line ${line + 1}:\n  checked in: ${a[line]?.trim()}\n  generated:  ${b[line]?.trim()}\nRun \`npm run sdk:types\` (then \`npm run build\` for packages/sdk/dist).`,
    );
  }
}, 60_000);
