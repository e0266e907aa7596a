import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { StateFileServer, TEST_MCP_POLICY } from '../fixtures/mcp/servers.ts';
import type { FixtureState } from '../fixtures/mcp/tool-list-server.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Input schemas exactly as today's MCP servers emit them (issue 31.1): written down from the
// libraries' documented output, key order included, so a change in the judge that refuses what
// these libraries write fails here.

/** FastMCP (Pydantic v2) for `def search_issues(repo: str, state: Literal["open", "closed"] = "open", limit: int | None = None, labels: list[str] | None = None)`. */
const PYDANTIC_OPTIONALS = {
  properties: {
    repo: { title: 'Repo', type: 'string' },
    state: { default: 'open', enum: ['open', 'closed'], title: 'State', type: 'string' },
    limit: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null, title: 'Limit' },
    labels: { anyOf: [{ items: { type: 'string' }, type: 'array' }, { type: 'null' }], default: null, title: 'Labels' },
  },
  required: ['repo'],
  title: 'search_issuesArguments',
  type: 'object',
};

/**
 * Pydantic v2 for `def adopt(pet: Annotated[Cat | Dog, Field(discriminator="pet_type")], color: Color,
 * owner: Owner, note: Color | None = None)`: models and enums become `$defs` named by `$ref`, the
 * discriminated union a `oneOf` with OpenAPI's `discriminator`, a Literal field a `const`.
 */
const PYDANTIC_MODELS = {
  $defs: {
    Address: {
      properties: { street: { title: 'Street', type: 'string' }, zip: { pattern: '^\\d{5}$', title: 'Zip', type: 'string' } },
      required: ['street', 'zip'],
      title: 'Address',
      type: 'object',
    },
    Cat: {
      properties: { pet_type: { const: 'cat', title: 'Pet Type', type: 'string' }, meows: { title: 'Meows', type: 'integer' } },
      required: ['pet_type', 'meows'],
      title: 'Cat',
      type: 'object',
    },
    Color: { enum: ['red', 'green'], title: 'Color', type: 'string' },
    Dog: {
      properties: { pet_type: { const: 'dog', title: 'Pet Type', type: 'string' }, barks: { title: 'Barks', type: 'number' } },
      required: ['pet_type', 'barks'],
      title: 'Dog',
      type: 'object',
    },
    Owner: {
      properties: { name: { title: 'Name', type: 'string' }, address: { $ref: '#/$defs/Address' } },
      required: ['name', 'address'],
      title: 'Owner',
      type: 'object',
    },
  },
  properties: {
    pet: {
      discriminator: { mapping: { cat: '#/$defs/Cat', dog: '#/$defs/Dog' }, propertyName: 'pet_type' },
      oneOf: [{ $ref: '#/$defs/Cat' }, { $ref: '#/$defs/Dog' }],
      title: 'Pet',
    },
    color: { $ref: '#/$defs/Color' },
    owner: { $ref: '#/$defs/Owner' },
    note: { anyOf: [{ $ref: '#/$defs/Color' }, { type: 'null' }], default: null },
  },
  required: ['pet', 'color', 'owner'],
  title: 'adoptArguments',
  type: 'object',
};

/**
 * zod-to-json-schema (Zod 3, the MCP TypeScript SDK 1.x) for `{ query: z.string().min(1), limit:
 * z.number().int().positive().optional(), sort: z.enum(["asc", "desc"]).default("asc"), filter:
 * z.union([z.string(), z.number()]).nullable(), target: z.discriminatedUnion("kind", [...]) }`:
 * draft-07, primitive unions as a `type` list, a nullable non-primitive as `anyOf` with null.
 */
const ZOD3 = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1 },
    limit: { type: 'integer', exclusiveMinimum: 0 },
    sort: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
    filter: { anyOf: [{ type: ['string', 'number'] }, { type: 'null' }] },
    target: {
      anyOf: [
        {
          type: 'object',
          properties: { kind: { type: 'string', const: 'user' }, id: { type: 'string', format: 'uuid' } },
          required: ['kind', 'id'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { kind: { type: 'string', const: 'team' }, slug: { type: 'string' } },
          required: ['kind', 'slug'],
          additionalProperties: false,
        },
      ],
    },
  },
  required: ['query', 'filter', 'target'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};

/**
 * Zod 4's `z.toJSONSchema` for `{ path: z.string(), mode: z.enum(["read", "write"]), depth:
 * z.number().int().nullable(), op: z.discriminatedUnion("type", [...]), tags: z.array(z.string()).optional() }`:
 * 2020-12, safe-integer bounds on `.int()`, nullable as `anyOf` with null, a discriminated union as `oneOf`.
 */
const ZOD4 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    path: { type: 'string' },
    mode: { type: 'string', enum: ['read', 'write'] },
    depth: { anyOf: [{ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }, { type: 'null' }] },
    op: {
      oneOf: [
        {
          type: 'object',
          properties: { type: { type: 'string', const: 'copy' }, to: { type: 'string' } },
          required: ['type', 'to'],
          additionalProperties: false,
        },
        { type: 'object', properties: { type: { type: 'string', const: 'delete' } }, required: ['type'], additionalProperties: false },
      ],
    },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['path', 'mode', 'depth', 'op'],
  additionalProperties: false,
};

const TENANT = 'acme-research';
const SUBJECT = 'agent:research-bot';
const SERVER = 'libs';
const TOOLS: Record<string, Record<string, unknown>> = { search_issues: PYDANTIC_OPTIONALS, adopt: PYDANTIC_MODELS, zod3_find: ZOD3, zod4_move: ZOD4 };
const state: FixtureState = {
  tools: Object.entries(TOOLS).map(([name, inputSchema]) => ({
    name,
    description: `${name} from a real server`,
    inputSchema,
    annotations: { readOnlyHint: true },
  })),
};

let t: TestApp;
const fixture = new StateFileServer(state);
let bundle: Bundle;

beforeAll(async () => {
  t = await startTestApp({ settings: { mcpCommands: TEST_MCP_POLICY.commands, mcpAllowHosts: TEST_MCP_POLICY.allowHosts } });
});
afterAll(async () => {
  fixture.dispose();
  await t.close();
});

function decideOn(tool: string, args: unknown) {
  const view = createView(loadBundle(bundle), { subject: SUBJECT, groups: ['knowledge'] });
  return decide(view, { toolCallId: 'c1', name: `mcp__${SERVER}__${tool}`, arguments: JSON.stringify(args) });
}
const pointers = (d: ReturnType<typeof decideOn>) => (d.errors ?? []).map((e) => e.pointer);

describe('tools whose schemas Pydantic and Zod wrote, from import to decide', () => {
  it('imports each quarantined with no schema problem, approves it and publishes it', async () => {
    expect((await t.request('POST', '/v1/mcp-servers', { body: { id: SERVER, label: 'Libraries', transport: fixture.transport() } })).status).toBe(201);
    expect((await t.request('POST', `/v1/mcp-servers/${SERVER}/sync`)).status).toBe(200);
    for (const name of Object.keys(TOOLS)) {
      const id = `mcp__${SERVER}__${name}`;
      const tool = await t.request('GET', `/v1/tools/${id}`);
      expect(tool.json.status).toBe('quarantined');
      expect(tool.json.inputSchema).toEqual(TOOLS[name]);
      expect(tool.json.review?.problems ?? []).toEqual([]);
      const approved = await t.request('POST', `/v1/tools/${id}/approve`, {
        body: { definitionHash: tool.json.definitionHash },
        headers: { 'if-match': tool.headers.get('etag')! },
      });
      expect(approved.status, JSON.stringify(approved.json)).toBe(200);
      const current = await t.request('GET', `/v1/tools/${id}`);
      const patched = await t.request('PATCH', `/v1/tools/${id}`, {
        body: { groups: ['knowledge'], redaction: { allow: ['$'] } },
        headers: { 'if-match': current.headers.get('etag')! },
      });
      expect(patched.status).toBe(200);
    }
    const policy = await t.request('GET', `/v1/tenants/${TENANT}/policy`);
    policy.json.roles.researcher.allow.push(`mcp__${SERVER}__*`);
    expect((await t.request('PUT', `/v1/tenants/${TENANT}/policy`, { body: policy.json, headers: { 'if-match': policy.headers.get('etag')! } })).status).toBe(
      200,
    );
    expect((await t.request('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: 'real servers' } })).status).toBe(201);
    const latest = await t.request('GET', `/v1/tenants/${TENANT}/bundles/latest`);
    bundle = JSON.parse(latest.text) as Bundle;
    for (const name of Object.keys(TOOLS)) expect(decideOn(name, {}).errorCode).not.toBe('policy_denied');
  });

  it('Pydantic optionals: null and absence pass, a wrong type or a value outside the Literal is refused where it sits', () => {
    expect(decideOn('search_issues', { repo: 'acme/x', limit: null, labels: null }).decision).toBe('allow');
    expect(decideOn('search_issues', { repo: 'acme/x', limit: 5, labels: ['bug'], state: 'closed' }).decision).toBe('allow');
    expect(decideOn('search_issues', { repo: 'acme/x' }).decision).toBe('allow');
    const wrong = decideOn('search_issues', { repo: 'acme/x', limit: '5' });
    expect(wrong).toMatchObject({ decision: 'deny', errorCode: 'validation' });
    expect(pointers(wrong)).toContain('/limit');
    expect(pointers(decideOn('search_issues', { repo: 'acme/x', state: 'merged' }))).toContain('/state');
    expect(pointers(decideOn('search_issues', { limit: null }))).toContain('/repo');
    expect(pointers(decideOn('search_issues', { repo: 'a', labels: [1] }))).toContain('/labels');
  });

  it('Pydantic models: a discriminated union, enums and nested models through $defs and $ref', () => {
    const good = { pet: { pet_type: 'cat', meows: 3 }, color: 'red', owner: { name: 'Ada', address: { street: 'Main', zip: '12345' } }, note: null };
    expect(decideOn('adopt', good).decision).toBe('allow');
    expect(decideOn('adopt', { ...good, pet: { pet_type: 'dog', barks: 1.5 }, note: 'green' }).decision).toBe('allow');
    expect(pointers(decideOn('adopt', { ...good, pet: { pet_type: 'dog', meows: 3 } }))).toContain('/pet');
    expect(pointers(decideOn('adopt', { ...good, color: 'blue' }))).toContain('/color');
    expect(pointers(decideOn('adopt', { ...good, note: 'blue' }))).toContain('/note');
    expect(pointers(decideOn('adopt', { ...good, owner: { name: 'Ada', address: { street: 'Main', zip: '1234' } } }))).toContain('/owner/address/zip');
  });

  it('Zod 3 (draft-07): a nullable union, a discriminated union as anyOf, formats and closed objects', () => {
    const good = { query: 'q', filter: null, target: { kind: 'user', id: '123e4567-e89b-12d3-a456-426614174000' } };
    expect(decideOn('zod3_find', good).decision).toBe('allow');
    expect(decideOn('zod3_find', { ...good, filter: 7, limit: 2, target: { kind: 'team', slug: 'core' } }).decision).toBe('allow');
    expect(pointers(decideOn('zod3_find', { ...good, filter: true }))).toContain('/filter');
    expect(pointers(decideOn('zod3_find', { ...good, limit: 0 }))).toContain('/limit');
    expect(pointers(decideOn('zod3_find', { ...good, target: { kind: 'user', id: 'urn:uuid:123e4567-e89b-12d3-a456-426614174000' } }))).toContain('/target');
    expect(pointers(decideOn('zod3_find', { ...good, extra: 1 }))).toContain('/extra');
    expect(pointers(decideOn('zod3_find', { query: '', filter: null, target: good.target }))).toContain('/query');
  });

  it('Zod 4 (2020-12): nullable as anyOf, a discriminated union as oneOf', () => {
    const good = { path: 'a.txt', mode: 'read', depth: null, op: { type: 'delete' } };
    expect(decideOn('zod4_move', good).decision).toBe('allow');
    expect(decideOn('zod4_move', { ...good, depth: 3, op: { type: 'copy', to: 'b.txt' }, tags: ['x'] }).decision).toBe('allow');
    expect(pointers(decideOn('zod4_move', { ...good, op: { type: 'copy' } }))).toContain('/op');
    expect(pointers(decideOn('zod4_move', { ...good, depth: 1.5 }))).toContain('/depth');
    expect(pointers(decideOn('zod4_move', { ...good, mode: 'exec' }))).toContain('/mode');
    expect(pointers(decideOn('zod4_move', { path: 'a', mode: 'read', op: { type: 'delete' } }))).toContain('/depth');
  });
});
