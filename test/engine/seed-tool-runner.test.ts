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

describe('no connection in arguments', () => {
  const open = build({
    policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
    tools: [
      tool('core__send', { requiresConnection: true, inputSchema: { type: 'object', properties: { to: { type: 'string' } } } }),
      tool('core__strict', { inputSchema: { type: 'object', additionalProperties: false, required: ['q'], properties: { q: { type: 'string' } } } }),
    ],
    grants: [{ connectionId: 'conn-mine', subjects: ['agent:a'], tools: ['core__send'] }],
  });
  const v = createView(open, { subject: 'agent:a', at: AT });
  const send = (args: string | Record<string, unknown>) => decide(v, { toolCallId: 'c', name: 'core__send', connectionId: 'conn-mine', arguments: args });

  it('R7.10 refuses a connectionId member the open schema accepts, naming it without its value', () => {
    const d = send('{"to":"x","connectionId":"conn-other"}');
    expect(d).toMatchObject({ toolCallId: 'c', decision: 'deny', errorCode: 'validation', errors: [{ pointer: '/connectionId' }] });
    expect(JSON.stringify(d)).not.toContain('conn-other');
    expect(send('{"to":"x"}').decision).toBe('allow');
  });

  it('R7.10 looks at every depth, objects inside arrays included, in parsed arguments as in JSON text', () => {
    expect(send('{"to":"x","meta":{"a":[1,{"b":{"connectionId":1}}]}}').errors?.map((e) => e.pointer)).toEqual(['/meta/a/1/b/connectionId']);
    expect(send({ to: 'x', list: [{ connectionId: 'c' }, { connectionId: 'd' }] }).errors?.map((e) => e.pointer)).toEqual([
      '/list/0/connectionId',
      '/list/1/connectionId',
    ]);
    // Any value counts, null included: the name is what is refused.
    expect(send('{"connectionId":null}').errorCode).toBe('validation');
    // Member names only: a string or a key that merely contains the name is data.
    expect(send('{"to":"connectionId","connectionIds":[],"xconnectionId":1}').decision).toBe('allow');
  });

  it('R7.10 reads JSON escapes as the name they spell', () => {
    expect(send('{"connection\\u0049d":"c"}').errors?.map((e) => e.pointer)).toEqual(['/connectionId']);
  });

  it('R7.10 stops the pointer at an object whose member name does not look like a field name', () => {
    const d = send('{"to":"x","Bearer sk-live/abc":{"connectionId":"c"},"ok":[{"Bearer sk-live/def":{"connectionId":"c"}}]}');
    expect(d.errors?.map((e) => e.pointer)).toEqual(['', '/ok/0']);
    expect(JSON.stringify(d)).not.toContain('sk-live');
  });

  it('R14.3 answers arguments nested past the limit with validation at ""; R14.6 cyclic parsed arguments with invalid_json', () => {
    const deep = `{"to":"x","d":${'['.repeat(100_000)}{"connectionId":1}${']'.repeat(100_000)}}`;
    expect(send(deep)).toMatchObject({ errorCode: 'validation', errors: [{ pointer: '' }] });
    expect(send(`{"to":"x","d":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toMatchObject({ errorCode: 'validation', errors: [{ pointer: '' }] });
    // 63 arrays inside the arguments object: 64 levels, inside the limit.
    expect(send(`{"to":"x","d":${'['.repeat(63)}${']'.repeat(63)}}`).decision).toBe('allow');
    const shared: Record<string, unknown> = { to: 'x', many: Array.from({ length: 2000 }, () => ({})) };
    expect(send(shared).decision).toBe('allow');
    shared.tail = { connectionId: 'c' };
    expect(send(shared).errors?.map((e) => e.pointer)).toEqual(['/tail/connectionId']);
    const cyclic: Record<string, unknown> = { to: 'x' };
    cyclic.self = cyclic;
    expect(send(cyclic)).toMatchObject({ errorCode: 'invalid_json' });
  });

  it('R7.8 R7.10 answers with the schema errors when the arguments also fail the schema', () => {
    const d = decide(v, { name: 'core__strict', arguments: '{"connectionId":"c"}' });
    expect(d.errorCode).toBe('validation');
    expect(d.errors?.map((e) => e.pointer).sort()).toEqual(['/connectionId', '/q']);
    expect(d.message).toContain('input schema');
  });

  it('R7.4 R7.10 checks the connection beside the arguments first: a foreign one is policy_denied', () => {
    const d = decide(v, { name: 'core__send', connectionId: 'conn-other', arguments: '{"connectionId":"conn-mine"}' });
    expect(d.errorCode).toBe('policy_denied');
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
    const search = loaded.byId.get('core__search')?.def;
    const def = search ? { name: search.id, description: search.description, inputSchema: search.inputSchema, outputSchema: search.outputSchema } : null;
    expect(def).not.toBeNull();
    expect(checkDefinition(loaded, 'core__search', def!)).toEqual({ ok: true, definitionHash: definitionHash(def!) });
    const changed = checkDefinition(loaded, 'core__search', { ...def!, description: 'Now also deletes things.' });
    expect(changed).toMatchObject({ ok: false, code: 'definition_mismatch' });
    expect(checkDefinition(loaded, 'core__missing', def!)).toMatchObject({ ok: false, code: 'unavailable' });
  });
});
