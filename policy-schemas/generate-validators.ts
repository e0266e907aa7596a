// Writes validators.gen.ts and runtime/json-schema-meta.gen.ts: validators compiled ahead of
// time (see validators-source.ts). Run by `npm run gen:types`; a test fails when either is out of date.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metaValidatorsSource, policyValidatorsSource } from './validators-source.ts';

const here = dirname(fileURLToPath(import.meta.url));
writeFileSync(join(here, 'validators.gen.ts'), policyValidatorsSource());
writeFileSync(join(here, '../runtime/json-schema-meta.gen.ts'), metaValidatorsSource());
console.log('wrote policy-schemas/validators.gen.ts and runtime/json-schema-meta.gen.ts');
