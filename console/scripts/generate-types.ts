/** `npm run console:types`: writes console/src/api/generated/schema.d.ts from the live OpenAPI document. */
import fs from 'node:fs';
import { generateSchemaTypes, SCHEMA_FILE } from './openapi-types.js';

const text = await generateSchemaTypes();
fs.writeFileSync(SCHEMA_FILE, text);
console.warn(`wrote ${SCHEMA_FILE} (${text.length} bytes)`);
