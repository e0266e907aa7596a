// Error codes, grant intersection, redaction and definition pins of the tool-use reference design.
import { describe, expect, it } from 'vitest';
import { checkDefinition } from '../../runtime/check-definition.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { redact } from '../../runtime/redact.ts';
import { build, tool } from './build.ts';

const AT = '2026-03-01T00:00:00.000Z';
const loaded = build({
  policy: {
    roles: {
      support: { groups: ['default'], allow: ['core__*'], deny: ['core__admin'], requireApproval: ['external_side_effect'] },
    },
    bindings: { 'agent:support': ['support'], 'agent:other': ['support'] },
  },
  tools: [
    tool('core__search', {
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['query'],
        properties: { query: { type: 'string', minLength: 1, maxLength: 20 }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
      },
      outputSchema: { type: 'object' },
      redaction: { allow: ['hits[].title', 'total', 'meta.*'] },
    }),
    tool('core__crm_update', { effect: 'external_side_effect', requiresConnection: true }),
    tool('core__admin'),
    tool('core__draft', { status: 'quarantined', redaction: undefined }),
  ],
  grants: [
    { connectionId: 'crm-a', subjects: ['agent:support'], tools: ['core__crm_*'] },
    { connectionId: 'crm-b', subjects: ['support'], tools: ['core__crm_update'] },
    { connectionId: 'crm-old', subjects: ['support'], tools: ['core__crm_update'], expiresAt: '2026-02-01T00:00:00Z' },
  ],
});
const view = createView(loaded, { subject: 'agent:support', at: AT });

describe('decide error codes', () => {
  it('R7.2 answers unavailable for an unknown tool name', () => {
    expect(decide(view, { toolCallId: 't1', name: 'core__missing', arguments: '{}' })).toMatchObject({
      toolCallId: 't1',
      decision: 'deny',
      errorCode: 'unavailable',
    });
  });

  it('R7.3 answers policy_denied for a known tool the request cannot see, quarantined ones included', () => {
    expect(decide(view, { name: 'core__admin', arguments: '{}' }).errorCode).toBe('policy_denied');
    expect(decide(view, { name: 'core__draft', arguments: '{}' }).errorCode).toBe('policy_denied');
  });

  it('R7.5 answers invalid_json for arguments that do not parse, without echoing them', () => {
    const d = decide(view, { toolCallId: 't2', name: 'core__search', arguments: '{"query": "hunter2' });
    expect(d).toMatchObject({ toolCallId: 't2', decision: 'deny', errorCode: 'invalid_json' });
    expect(JSON.stringify(d)).not.toContain('hunter2');
  });

  it('R7.6 answers validation with a JSON pointer per problem, without echoing values', () => {
    const d = decide(view, { name: 'core__search', arguments: JSON.stringify({ query: 'sk-live-secret-value-long', limit: 99, extra: 1 }) });
    expect(d.errorCode).toBe('validation');
    expect(d.errors?.map((e) => e.pointer).sort()).toEqual(['/extra', '/limit', '/query']);
    expect(JSON.stringify(d)).not.toContain('sk-live');
    const oddKey = decide(view, { name: 'core__search', arguments: JSON.stringify({ query: 'x', 'Bearer abc/def ghi': 1 }) });
    expect(oddKey.errors).toEqual([{ pointer: '', message: 'has a field that is not allowed' }]);
    expect(JSON.stringify(oddKey)).not.toContain('Bearer');
    const missing = decide(view, { name: 'core__search', arguments: '{}' });
    expect(missing.errors).toEqual([{ pointer: '/query', message: 'is required' }]);
  });

  it('R7.7 allows a valid call, keeping the caller toolCallId', () => {
    expect(decide(view, { toolCallId: 'call_9', name: 'core__search', arguments: '{"query":"refunds"}' })).toEqual({ toolCallId: 'call_9', decision: 'allow' });
  });

  it('R7.5 accepts already parsed arguments', () => {
    expect(decide(view, { name: 'core__search', arguments: { query: 'x' } }).decision).toBe('allow');
  });

  it('R7.1 gives a new UUID when the caller has no toolCallId', () => {
    const a = decide(view, { name: 'core__missing' }).toolCallId;
    const b = decide(view, { name: 'core__missing' }).toolCallId;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });
});

describe('connections and grant intersection', () => {
  it('R7.4 answers validation when a tool requiring a connection gets none', () => {
    expect(decide(view, { name: 'core__crm_update', arguments: '{}' }).errorCode).toBe('validation');
  });

  it('R7.7 requires approval for an external side effect with a granted connection', () => {
    expect(decide(view, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-a' }).decision).toBe('require_approval');
    expect(decide(view, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-b' }).decision).toBe('require_approval');
  });

  it('R7.4 answers policy_denied for a connection outside the grants, or expired', () => {
    expect(decide(view, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-z' }).errorCode).toBe('policy_denied');
    expect(decide(view, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-old' }).errorCode).toBe('policy_denied');
  });

  it('R7.4 uses grant ∩ request allowedConnectionIds', () => {
    const narrowed = createView(loaded, { subject: 'agent:support', at: AT, allowedConnectionIds: ['crm-b', 'crm-z'] });
    expect(decide(narrowed, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-b' }).decision).toBe('require_approval');
    expect(decide(narrowed, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-a' }).errorCode).toBe('policy_denied');
    expect(decide(narrowed, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-z' }).errorCode).toBe('policy_denied');
  });

  it('R6.13 hides the tool when the intersection is empty', () => {
    const empty = createView(loaded, { subject: 'agent:support', at: AT, allowedConnectionIds: ['crm-z'] });
    expect(empty.result.filtered).toContainEqual({ id: 'core__crm_update', reason: 'no_connection' });
    expect(decide(empty, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-a' }).errorCode).toBe('policy_denied');
  });

  it('R6.13 does not give one subject another subject grant', () => {
    const other = createView(loaded, { subject: 'agent:other', at: AT });
    expect(decide(other, { name: 'core__crm_update', arguments: '{}', connectionId: 'crm-a' }).errorCode).toBe('policy_denied');
  });
});

describe('redaction', () => {
  it('R10.2 keeps only allowlisted output fields', () => {
    const out = {
      hits: [
        { title: 'a', body: 'secret' },
        { title: 'b', token: 'x' },
      ],
      total: 2,
      meta: { took: 3, page: 1 },
      raw: 'drop',
    };
    expect(redact(loaded, 'core__search', out)).toEqual({ hits: [{ title: 'a' }, { title: 'b' }], total: 2, meta: { took: 3, page: 1 } });
  });

  it('R10.1 keeps nothing for an unknown tool or a tool without an allowlist', () => {
    expect(redact(loaded, 'core__missing', { a: 1 })).toBeUndefined();
    expect(redact(loaded, 'core__draft', { a: 1 })).toBeUndefined();
  });

  it('R10.3 drops mismatched shapes instead of passing them through', () => {
    expect(redact(loaded, 'core__search', { hits: 'not-a-list', total: 1 })).toEqual({ total: 1 });
    expect(redact(loaded, 'core__search', 'plain text')).toBeUndefined();
  });
});

describe('definition pins', () => {
  it('R13.2 accepts the definition the bundle pinned and refuses a changed one', () => {
    const search = loaded.bundle.catalog.tools.find((t) => t.id === 'core__search')!;
    const def =
      'inputSchema' in search ? { name: search.id, description: search.description, inputSchema: search.inputSchema, outputSchema: search.outputSchema } : null;
    expect(def).not.toBeNull();
    expect(checkDefinition(loaded, 'core__search', def!)).toEqual({ ok: true, definitionHash: definitionHash(def!) });
    const changed = checkDefinition(loaded, 'core__search', { ...def!, description: 'Now also deletes things.' });
    expect(changed).toMatchObject({ ok: false, code: 'definition_mismatch' });
    expect(checkDefinition(loaded, 'core__missing', def!)).toMatchObject({ ok: false, code: 'unavailable' });
  });
});
