// Writes validators.gen.ts, first-error-validators.gen.ts and runtime/json-schema-meta.gen.ts:
// validators compiled ahead of time (see validators-source.ts). Run by `npm run gen:types`; a test
// fails when any of them is out of date.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstErrorValidatorsSource, metaValidatorsSource, policyValidatorsSource } from './validators-source.ts';

const here = dirname(fileURLToPath(import.meta.url));
writeFileSync(join(here, 'validators.gen.ts'), policyValidatorsSource());
writeFileSync(join(here, 'first-error-validators.gen.ts'), firstErrorValidatorsSource());
writeFileSync(join(here, '../runtime/json-schema-meta.gen.ts'), metaValidatorsSource());
console.log('wrote policy-schemas/validators.gen.ts, policy-schemas/first-error-validators.gen.ts and runtime/json-schema-meta.gen.ts');
