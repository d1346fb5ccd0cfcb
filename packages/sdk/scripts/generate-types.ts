/** `npm run sdk:types`: writes packages/sdk/src/generated/openapi.d.ts from the live OpenAPI document. */
import fs from 'node:fs';
import { generateSdkTypes, SDK_TYPES_FILE } from './openapi-types.js';

const text = await generateSdkTypes();
fs.writeFileSync(SDK_TYPES_FILE, text);
console.warn(`wrote ${SDK_TYPES_FILE} (${text.length} bytes)`);
