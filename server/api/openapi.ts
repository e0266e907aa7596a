import { Hono } from 'hono';
import { SCHEMA_BASE, schemas } from '../../policy-schemas/index.ts';
import type { AppEnv } from '../context.ts';
import { MAX_WAIT_SECONDS } from '../distribution/serving.ts';

type Op = {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  body?: string;
  response?: string;
  list?: string;
  tag: string;
  status?: string;
  /** Optional query and header parameters the route reads, beside its path parameters. */
  params?: Record<string, unknown>[];
  /** Answers besides the success, the If-Match refusals and the problem default. */
  answers?: Record<string, unknown>;
};

const crud = (base: string, key: string, kind: string, tag: string, patch = true): Op[] => [
  { method: 'get', path: base, summary: `List ${tag.toLowerCase()}`, list: kind, tag },
  { method: 'post', path: base, summary: `Create a ${kind}`, body: kind, response: kind, tag },
  { method: 'get', path: `${base}/{${key}}`, summary: `Read a ${kind}`, response: kind, tag },
  { method: 'put', path: `${base}/{${key}}`, summary: `Replace a ${kind} (If-Match)`, body: kind, response: kind, tag },
  ...(patch ? [{ method: 'patch' as const, path: `${base}/{${key}}`, summary: `Merge-patch a ${kind} (If-Match)`, response: kind, tag }] : []),
  { method: 'delete', path: `${base}/{${key}}`, summary: `Delete a ${kind} (If-Match)`, tag },
];

/**
 * Every route of the API; the OpenAPI document is built from this list and the schemas.
 * test/api/openapi-routes.test.ts fails when a mounted route is missing here or a listed one is not mounted.
 */
const operations: Op[] = [
  {
    method: 'get',
    path: '/v1/tools',
    summary: 'List tools: search, filters, sort; paged with limit and cursor (query: tool-query)',
    response: 'tool-list',
    tag: 'Tools',
  },
  ...crud('/v1/tools', 'id', 'tool', 'Tools').filter((op) => !(op.method === 'get' && op.path === '/v1/tools')),
  {
    method: 'post',
    path: '/v1/tools/{id}/approve',
    summary: 'Approve a quarantined imported tool (If-Match), with the effect, redaction and groups the admin decides',
    body: 'tool-approve',
    response: 'tool',
    tag: 'Tools',
    status: '200',
  },
  {
    method: 'get',
    path: '/v1/tools/{id}/usage',
    summary: "In each readable tenant: what every role's draft policy does with the tool, who reaches it, its recent decisions",
    response: 'tool-usage',
    tag: 'Tools',
  },
  {
    method: 'get',
    path: '/v1/subjects/{subject}',
    summary: 'In each readable tenant: the roles of a subject (agent), what it would see on the draft (simulated), its recent decisions',
    response: 'subject-overview',
    tag: 'Tenants',
  },
  {
    method: 'get',
    path: '/v1/overview',
    summary: 'Tenants with their published version, draft changes and fleet; what needs attention',
    response: 'overview',
    tag: 'Tenants',
  },
  ...crud('/v1/groups', 'name', 'group', 'Groups'),
  ...crud('/v1/states', 'name', 'state', 'States'),
  ...crud('/v1/tenants', 'tenant', 'tenant', 'Tenants'),
  { method: 'get', path: '/v1/tenants/{tenant}/policy', summary: 'Read the tenant policy', response: 'tenant-policy', tag: 'Tenants' },
  {
    method: 'put',
    path: '/v1/tenants/{tenant}/policy',
    summary: 'Replace the tenant policy (If-Match)',
    body: 'tenant-policy',
    response: 'tenant-policy',
    tag: 'Tenants',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/policy/reset',
    summary: "Reset the draft policy and grants to a published version's content (If-Match: the policy's version)",
    body: 'policy-reset',
    response: 'tenant-policy',
    tag: 'Tenants',
    status: '200',
  },
  ...crud('/v1/tenants/{tenant}/grants', 'connectionId', 'connection-grant', 'Grants', false),
  ...crud('/v1/mcp-servers', 'id', 'mcp-server', 'MCP servers'),
  { method: 'post', path: '/v1/mcp-servers/{id}/sync', summary: 'Import tools from an MCP server (tools/list)', response: 'mcp-server', tag: 'MCP servers' },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/simulate',
    summary: 'Evaluate a request on the current draft (or on an unsaved policy sent with it)',
    body: 'simulate-request',
    response: 'simulate-result',
    tag: 'Bundles',
    status: '200',
  },
  { method: 'get', path: '/v1/tenants/{tenant}/tests', summary: "Read the tenant's policy tests", response: 'policy-tests', tag: 'Tenants' },
  {
    method: 'put',
    path: '/v1/tenants/{tenant}/tests',
    summary: "Replace the tenant's policy tests (If-Match)",
    body: 'policy-tests',
    response: 'policy-tests',
    tag: 'Tenants',
  },
  { method: 'post', path: '/v1/tenants/{tenant}/bundles', summary: 'Compile, sign and publish (or roll back)', body: 'bundle-publish', tag: 'Bundles' },
  { method: 'get', path: '/v1/tenants/{tenant}/bundles', summary: 'Published versions with who/when/why', list: 'bundle-version', tag: 'Bundles' },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/publish-requests',
    summary: 'Publishes under review, newest first (query status: pending, published, rejected)',
    response: 'publish-request-list',
    tag: 'Bundles',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/publish-requests',
    summary: 'Ask another person to review publishing the draft (or a rollback), whatever the review rule (202)',
    body: 'publish-request-create',
    response: 'publish-request',
    tag: 'Bundles',
    status: '202',
  },
  { method: 'get', path: '/v1/tenants/{tenant}/publish-requests/{id}', summary: 'One publish request', response: 'publish-request', tag: 'Bundles' },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/publish-requests/{id}/approve',
    summary: 'Approve a publish request (another person than the requester): publishes exactly the reviewed content; 409 stale when the draft changed',
    body: 'publish-request-decision',
    response: 'publish-request',
    tag: 'Bundles',
    status: '200',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/publish-requests/{id}/reject',
    summary: 'Reject a publish request with a reason',
    body: 'publish-request-decision',
    response: 'publish-request',
    tag: 'Bundles',
    status: '200',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/promote',
    summary:
      "Copy this tenant's roles, bindings, profiles, budgets, policy tests and grants into another tenant's draft (?plan=1: only show what would change)",
    body: 'promote-request',
    response: 'promote-result',
    tag: 'Tenants',
    status: '200',
    params: [{ name: 'plan', in: 'query', required: false, description: '1: answer the plan and change nothing', schema: { enum: ['0', '1'] } }],
  },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/bundles/latest',
    summary: 'The latest bundle.json (ETag, If-None-Match, ?wait=N long-poll)',
    tag: 'Distribution',
    params: [
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The ETag (quoted revision) of the bundle the runtime holds: 304 while it is still the latest',
        schema: { type: 'string' },
      },
      {
        name: 'Toolgate-Version',
        in: 'header',
        required: false,
        description:
          'The version the runtime holds (or last refused): with If-None-Match, a newer version of the same content is sent rather than answered 304. Anything but 1–15 digits counts as holding none.',
        schema: { type: 'string' },
      },
      {
        name: 'wait',
        in: 'query',
        required: false,
        description: `Seconds (at most ${MAX_WAIT_SECONDS}; more is capped) to hold a pull that would answer 304 until a new version is published: a long poll`,
        schema: { type: 'integer', minimum: 0 },
      },
    ],
    answers: { '304': { description: 'The runtime holds the latest bundle' } },
  },
  { method: 'get', path: '/v1/tenants/{tenant}/bundles/{version}', summary: 'One bundle.json, exact signed bytes', tag: 'Distribution' },
  { method: 'get', path: '/v1/tenants/{tenant}/bundles/{version}/signature', summary: 'The detached JWS of a version', tag: 'Distribution' },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/bundles/{a}/diff/{b}',
    summary: 'What changed between two versions (b may be draft)',
    response: 'bundle-diff',
    tag: 'Bundles',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/runtimes/status',
    summary: 'A runtime reports its version and health',
    body: 'runtime-status',
    tag: 'Distribution',
    status: '204',
  },
  { method: 'get', path: '/v1/tenants/{tenant}/runtimes', summary: 'Which version each runtime runs', tag: 'Distribution' },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/decisions',
    summary: 'A runtime reports what it decided (JSON or gzip; one bad record refuses the batch)',
    body: 'decision-batch',
    tag: 'Decisions',
    status: '202',
  },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/decisions',
    summary: 'Decision records newest first (filters, cursor pagination)',
    list: 'decision',
    tag: 'Decisions',
  },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/decisions/summary',
    summary: 'Histogram by decision and the most denied tools and subjects',
    response: 'decision-summary',
    tag: 'Decisions',
  },
  { method: 'get', path: '/v1/tenants/{tenant}/decisions/export', summary: 'Streamed export of decision records, jsonl or csv', tag: 'Decisions' },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/impact',
    summary:
      'Replay logged requests against the draft (or an unsaved policy): which decisions would change (429 with Retry-After while two analyses already run)',
    body: 'impact-request',
    response: 'impact-report',
    tag: 'Decisions',
    status: '200',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/approvals',
    summary: 'A runtime asks a person to approve one exact call (runtime token; at most 100 pending per token, then 429)',
    body: 'approval-request',
    response: 'approval',
    tag: 'Approvals',
    status: '201',
  },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/approvals',
    summary: 'Approval requests newest first (state filter, cursor pagination); arguments only for those who may decide',
    list: 'approval',
    tag: 'Approvals',
  },
  {
    method: 'get',
    path: '/v1/tenants/{tenant}/approvals/{id}',
    summary: 'One approval request: pending, approved (with its receipt), denied or expired; ?wait=N long-polls for the decision',
    response: 'approval',
    tag: 'Approvals',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/approvals/{id}/approve',
    summary: 'A person approves the call, with a reason: answers the signed receipt (never by the token that asked)',
    body: 'approval-decision',
    response: 'approval',
    tag: 'Approvals',
    status: '200',
  },
  {
    method: 'post',
    path: '/v1/tenants/{tenant}/approvals/{id}/deny',
    summary: 'A person denies the call, with a reason',
    body: 'approval-decision',
    response: 'approval',
    tag: 'Approvals',
    status: '200',
  },
  { method: 'get', path: '/v1/audit', summary: 'Audit history (filters, cursor pagination)', tag: 'Audit' },
  { method: 'get', path: '/v1/audit/export', summary: 'Streamed export, jsonl or csv', tag: 'Audit' },
  { method: 'get', path: '/v1/audit/verify', summary: 'Check the hash chain; names the first broken link', tag: 'Audit' },
  {
    method: 'get',
    path: '/v1/audit/checkpoints',
    summary: 'Signed audit chain heads, newest first (cursor pagination)',
    list: 'audit-checkpoint',
    tag: 'Audit',
  },
  {
    method: 'get',
    path: '/v1/audit/checkpoints/latest',
    summary: 'The latest signed audit chain head, as a file to keep',
    response: 'audit-checkpoint',
    tag: 'Audit',
  },
  {
    method: 'get',
    path: '/v1/keys',
    summary: 'Signing keys with their status, the key set and its roots (ETag: the key-set version)',
    response: 'key-overview',
    tag: 'Keys',
  },
  {
    method: 'post',
    path: '/v1/keys/rotate',
    summary: 'Add a next signing key (published in the key set before it signs); optional scheduled promotion (If-Match: the ETag of GET /v1/keys)',
    body: 'key-action',
    tag: 'Keys',
  },
  {
    method: 'post',
    path: '/v1/keys/{kid}/promote',
    summary: 'Make a next key the signer; the previous one stays active (If-Match: the ETag of GET /v1/keys)',
    body: 'key-action',
    tag: 'Keys',
    status: '200',
  },
  {
    method: 'post',
    path: '/v1/keys/{kid}/retire',
    summary: "Retire a key no tenant's latest bundle uses (reissue: re-sign those first) (If-Match: the ETag of GET /v1/keys)",
    body: 'key-action',
    tag: 'Keys',
    status: '200',
  },
  { method: 'get', path: '/v1/tokens', summary: 'List API tokens', list: 'token', tag: 'Auth' },
  { method: 'post', path: '/v1/tokens', summary: 'Create an API token (shown once)', body: 'token-create', response: 'token', tag: 'Auth' },
  { method: 'get', path: '/v1/tokens/{id}', summary: 'Read an API token (never its secret)', response: 'token', tag: 'Auth' },
  { method: 'delete', path: '/v1/tokens/{id}', summary: 'Revoke an API token (If-Match)', tag: 'Auth' },
  {
    method: 'post',
    path: '/v1/session',
    summary: 'Console login: token → HttpOnly session cookie + CSRF token',
    body: 'session-create',
    response: 'session',
    tag: 'Auth',
    status: '200',
  },
  { method: 'get', path: '/v1/session', summary: 'The current console session and what it may do', response: 'session', tag: 'Auth' },
  {
    method: 'delete',
    path: '/v1/session',
    summary: 'Log out (a person signed in through single sign-on gets `{ endSessionUrl }` to sign out at the provider too)',
    tag: 'Auth',
  },
  { method: 'get', path: '/v1/session/sso', summary: 'Whether single sign-on is offered (`{ enabled }`)', tag: 'Auth' },
  {
    method: 'get',
    path: '/v1/session/sso/start',
    summary: 'Browser: redirect to the identity provider (code flow, PKCE, state, nonce)',
    tag: 'Auth',
    status: '302',
  },
  {
    method: 'get',
    path: '/v1/session/sso/callback',
    summary: 'Browser: back from the identity provider; opens a console session or shows why not (HTML)',
    tag: 'Auth',
  },
  ...crud('/v1/sso/mappings', 'id', 'sso-mapping', 'Auth'),
  {
    method: 'post',
    path: '/v1/sso/mappings/preview',
    summary: 'What a set of ID-token claims would get under the current mappings',
    body: 'sso-preview',
    response: 'sso-access',
    tag: 'Auth',
    status: '200',
  },
  { method: 'get', path: '/.well-known/jwks.json', summary: 'Bundle signing public keys (status next or active)', tag: 'Distribution' },
  {
    method: 'get',
    path: '/.well-known/toolgate-keyset.json',
    summary: 'The root-signed key set (RFC 8785 bytes; Toolgate-Signature; ?version=N for an earlier one)',
    response: 'key-set',
    tag: 'Distribution',
  },
  { method: 'get', path: '/healthz', summary: 'Liveness', tag: 'Operations' },
  {
    method: 'get',
    path: '/metrics',
    summary: "Prometheus metrics (an admin's or auditor's token unless TOOLGATE_METRICS_PUBLIC=1)",
    tag: 'Operations',
  },
  { method: 'get', path: '/v1/openapi.json', summary: 'This document (no token needed)', tag: 'Operations' },
];

const ref = (kind: string) => ({ $ref: `${SCHEMA_BASE}${kind}.schema.json` });
const problem = { description: 'Error', content: { 'application/problem+json': { schema: ref('problem') } } };

// A change that must name the version it saw says "(If-Match" in its summary; the document then
// declares the header and its two refusals, so generated clients send it and know both answers.
const ifMatchHeader = {
  name: 'If-Match',
  in: 'header',
  required: true,
  description: 'The ETag of the version this change was made against (one strong ETag; `*` names no version)',
  schema: { type: 'string' },
};
const ifMatchRefusals = {
  '412': { description: 'The ETag names another version, or none: the problem carries `current`', content: problem.content },
  '428': { description: 'If-Match is missing', content: problem.content },
};

/** OpenAPI 3.1 document: components are the policy schemas themselves (3.1 speaks JSON Schema 2020-12). */
export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const ifMatch = op.summary.includes('(If-Match');
    const params: Record<string, unknown>[] = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (ifMatch) params.push(ifMatchHeader);
    if (op.params) params.push(...op.params);
    const ok = op.response
      ? { content: { 'application/json': { schema: ref(op.response) } } }
      : op.list
        ? { content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array', items: ref(op.list) } } } } } }
        : {};
    (paths[op.path] ??= {})[op.method] = {
      summary: op.summary,
      tags: [op.tag],
      ...(params.length ? { parameters: params } : {}),
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(op.body) } } } } : {}),
      responses: {
        [op.status ?? (op.method === 'post' && op.body ? '201' : op.method === 'delete' ? '204' : '200')]: { description: 'OK', ...ok },
        ...(ifMatch ? ifMatchRefusals : {}),
        ...(op.answers ?? {}),
        default: problem,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Toolgate', version: '1', description: 'Control plane for what AI agents may do.' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, s])),
    },
  };
}

export const openApiRoutes = new Hono<AppEnv>();
// A pure memo of constant data (built from the schemas and route tables in the source, the same for
// every server), so it may live in the module: made on the first request instead of at import.
let cached: Record<string, unknown> | undefined;
openApiRoutes.get('/', (c) => c.json((cached ??= buildOpenApi())));
