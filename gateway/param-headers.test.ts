import { describe, expect, it } from 'vitest';
import { decodeHeaderValue, encodeHeaderValue, paramHeaderMismatch, paramHeaders } from './param-headers.ts';

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    limit: { type: 'integer', 'x-mcp-header': 'Limit' },
    dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
    target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
    list: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', 'x-mcp-header': 'Item' } } } },
    bad: { type: 'string', 'x-mcp-header': 'Not A Token' },
  },
};

describe('Mcp-Param headers (x-mcp-header)', () => {
  it('mirrors annotated arguments reachable through properties, encoding what a header cannot carry plainly', () => {
    expect(paramHeaders(schema, { region: 'us-west1', limit: 42, dry: false, target: { zone: ' a ' }, list: [{ id: 'x' }], bad: 'y' })).toEqual({
      'mcp-param-region': 'us-west1',
      'mcp-param-limit': '42',
      'mcp-param-dry-run': 'false',
      'mcp-param-zone': `=?base64?${Buffer.from(' a ').toString('base64')}?=`,
    });
    expect(paramHeaders(schema, { region: null })).toEqual({});
    expect(encodeHeaderValue('=?base64?literal?=')).toBe(`=?base64?${Buffer.from('=?base64?literal?=').toString('base64')}?=`);
    expect(decodeHeaderValue(encodeHeaderValue('Hello, 世界'))).toBe('Hello, 世界');
    expect(decodeHeaderValue('=?base64?not base64?=')).toBe('=?base64?not base64?=');
    expect(decodeHeaderValue('=?base64?YQ?=')).toBeNull();
  });

  it('refuses a missing, different or malformed header, and compares integers as numbers', () => {
    const args = { region: 'eu', limit: 42 };
    expect(paramHeaderMismatch(schema, args, { 'mcp-param-region': 'eu', 'mcp-param-limit': '42.0' })).toBeNull();
    expect(paramHeaderMismatch(schema, args, { 'mcp-param-limit': '42' })).toMatch(/Mcp-Param-Region header is required/);
    expect(paramHeaderMismatch(schema, args, { 'mcp-param-region': 'us', 'mcp-param-limit': '42' })).toMatch(/does not match the argument region/);
    expect(paramHeaderMismatch(schema, args, { 'mcp-param-region': 'eu', 'mcp-param-limit': '' })).toMatch(/does not match/);
    expect(paramHeaderMismatch(schema, args, { 'mcp-param-region': '=?base64?YQ?=', 'mcp-param-limit': '42' })).toMatch(/malformed/);
    expect(paramHeaderMismatch(schema, { region: { not: 'primitive' } }, {})).toMatch(/cannot travel in a header/);
    // An argument not given needs no header.
    expect(paramHeaderMismatch(schema, {}, {})).toBeNull();
    // A header whose argument is absent or null is an orphan: a router would have acted on a value the body does not carry.
    expect(paramHeaderMismatch(schema, {}, { 'mcp-param-region': 'eu' })).toMatch(/Mcp-Param-Region header names an argument region the call does not give/);
    expect(paramHeaderMismatch(schema, { region: null }, { 'mcp-param-region': 'eu' })).toMatch(/does not give/);
  });
});
