import { compile } from 'json-schema-to-typescript';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemas } from './index.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** The source of types.gen.ts, generated from every schema in this folder. */
export async function generateTypesSource(): Promise<string> {
  const parts: string[] = ['// Generated from policy-schemas/*.schema.json by `npm run gen:types`. Do not edit.', '/* eslint-disable */'];
  const emitted = new Set<string>();
  for (const [kind, schema] of Object.entries(schemas)) {
    if (kind === 'common') continue;
    const ts = await compile(structuredClone(schema) as never, String(schema.title ?? kind), {
      bannerComment: '',
      additionalProperties: false,
      declareExternallyReferenced: true,
      strictIndexSignatures: false,
      format: false,
      cwd: here,
    });
    // Referenced schemas are declared again in every file that uses them: keep the first.
    for (const decl of ts.split(/\n(?=export )/)) {
      const name = /^export (?:interface|type) (\w+)/.exec(decl.trim())?.[1];
      // Referenced schemas are emitted again by each schema that uses them; distinct types need distinct titles.
      if (name && emitted.has(name)) continue;
      if (name) emitted.add(name);
      parts.push(decl.trim());
    }
  }
  return `${parts.join('\n\n')}\n`;
}
