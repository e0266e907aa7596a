// Writes types.gen.ts: the TypeScript types of every schema, so no type is written by hand twice.
// Run with `npm run gen:types`; a test fails when the file is out of date.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTypesSource } from './types-source.ts';

const here = dirname(fileURLToPath(import.meta.url));
writeFileSync(join(here, 'types.gen.ts'), await generateTypesSource());
console.log('wrote policy-schemas/types.gen.ts');
