import { describe, expect, it, vi } from 'vitest';
import { compileInputSchema } from './load-bundle.ts';

// Input schemas come from many bundles (tenants, versions) compiled in one process. A root `$id`
// is a name a schema gives itself, not one the process may hold it to: two different schemas of
// the same name must each compile and each check by its own rules.
describe('input schemas that name themselves alike', () => {
  const base = 'https://example.test/schemas/args';

  it('compiles two different schemas with the same root $id, each checking by its own rules', () => {
    const first = compileInputSchema({ $id: base, type: 'object', required: ['a'], properties: { a: { type: 'string' } } });
    const second = compileInputSchema({ $id: base, type: 'object', required: ['b'], properties: { b: { type: 'number' } } });
    expect(first({ a: 'x' })).toBe(true);
    expect(first({ b: 1 })).toBe(false);
    expect(second({ b: 1 })).toBe(true);
    expect(second({ a: 'x' })).toBe(false);
  });

  it('resolves a local $ref inside a schema with a root $id', () => {
    const validate = compileInputSchema({
      $id: `${base}/with-defs`,
      type: 'object',
      properties: { n: { $ref: '#/$defs/small' } },
      $defs: { small: { type: 'integer', maximum: 3 } },
    });
    expect(validate({ n: 2 })).toBe(true);
    expect(validate({ n: 9 })).toBe(false);
  });

  it('still refuses a schema that is not valid against its meta-schema, whatever its $id', () => {
    expect(() => compileInputSchema({ $id: `${base}/bad`, type: 'no-such-type' })).toThrow();
  });
});

describe('input schemas with a format this runtime does not know', () => {
  it('compile quietly (the host owns its console) and treat the format as an annotation', () => {
    const warn = vi.spyOn(console, 'warn');
    const log = vi.spyOn(console, 'log');
    try {
      const validate = compileInputSchema({ type: 'object', properties: { id: { type: 'string', format: 'x-vendor-format' } } });
      expect(validate({ id: 'anything' })).toBe(true);
      expect(warn).not.toHaveBeenCalled();
      expect(log).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });
});
