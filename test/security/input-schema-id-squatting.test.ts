// Attack: save a tool whose input schema names itself with a root `$id` another tool (another
// tenant's, or the next version of an MCP server's) will use, so that the other schema "does not
// compile" when it is saved, imported or loaded in the same process, or is checked by the first
// schema's rules. A root `$id` must stay the schema's own business.
import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { checkInputSchema } from '../../server/validation/input-schema.ts';

const NAME = 'https://schemas.example.test/search-args';
const squatter = { $id: NAME, type: 'object', additionalProperties: false, properties: { anything: { type: 'string' } } };
const victim = { $id: NAME, type: 'object', additionalProperties: false, required: ['query'], properties: { query: { type: 'string', maxLength: 10 } } };

describe('a root $id another schema already used', () => {
  it('does not stop the judge from accepting a different schema of the same name', () => {
    expect(checkInputSchema(squatter, '')).toEqual([]);
    expect(checkInputSchema(victim, '')).toEqual([]);
  });

  it("does not make the second schema check by the first one's rules", () => {
    compileInputSchema(squatter);
    const validate = compileInputSchema(victim);
    expect(validate({ query: 'ok' })).toBe(true);
    expect(validate({ anything: 'x' })).toBe(false);
    expect(validate({ query: 'far too long for it' })).toBe(false);
  });
});
