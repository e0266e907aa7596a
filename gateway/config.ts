import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { EvaluationRequest, GatewayClient, GatewayConfig, GatewayUpstream } from '../policy-schemas/types.gen.ts';
import { escapePointer, validate } from '../policy-schemas/index.ts';
import { setOwnMember } from '../runtime/own-member.ts';
import type { TrustedKeys } from '../runtime/verify-bundle.ts';
import type { RootKey } from '../runtime/verify-key-set.ts';
import { type ResolvedOAuth, clientsReachedByOAuth, resolveOAuth } from './oauth-config.ts';

/** One problem with a configuration, located by JSON pointer; never carries an environment value. */
export type ConfigProblem = { pointer: string; message: string };

export type ConfigResult = { ok: true; config: ResolvedConfig } | { ok: false; problems: ConfigProblem[] };

/** A client entry with its key reduced to a sha-256 digest (the key itself is not kept). */
export type ResolvedClient = {
  readonly name: string;
  readonly subject: string;
  /** Raw sha-256 of the key; null for a stdio client configured without one. */
  readonly keyDigest: Buffer | null;
  /** The request fields evaluate() sees, except `state`, which each session carries. */
  readonly request: Omit<EvaluationRequest, 'state'>;
  readonly initialState: string;
};

export type ResolvedConfig = {
  control: {
    url: string;
    tenant: string;
    token: string;
    trust: { trustedKeys: TrustedKeys } | { trustedRoots: RootKey[] };
    mirrors: string[];
    cacheDir: string;
    runtimeId: string;
  };
  listen: { kind: 'http'; host: string; port: number; path: string; allowedOrigins: string[] } | { kind: 'stdio'; client: ResolvedClient };
  clients: ResolvedClient[];
  upstreams: Map<string, GatewayUpstream>;
  timeouts: { callMs: number; approvalMs: number; relistMs: number };
  limits: { sessionsPerClient: number; pendingApprovalsPerClient: number };
  /** OAuth access tokens taken besides static keys (auth.oauth); absent or null when only keys are. */
  oauth?: ResolvedOAuth | null;
  /** Raw sha-256 of the metrics key; null when /metrics is not served. */
  metricsKeyDigest: Buffer | null;
};

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Reads, resolves `${NAME}` from `env`, validates (policy-schemas/gateway-config.schema.json) and
 * cross-checks a gateway configuration file. Every problem names its JSON pointer; no message
 * repeats a value taken from the environment.
 */
export async function loadGatewayConfig(file: string, env: Record<string, string | undefined> = process.env): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return fail('', `cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('', 'is not valid JSON');
  }
  const problems: ConfigProblem[] = [];
  const resolved = substitute(raw, '', env, problems);
  if (problems.length > 0) return { ok: false, problems };

  const checked = validate<GatewayConfig>('gateway-config', resolved);
  if (!checked.ok) {
    const listed = checked.errors.map((e) => ({ pointer: e.pointer, message: e.message }));
    return { ok: false, problems: listed.length > 0 ? listed : [{ pointer: '', message: 'does not match the configuration schema' }] };
  }
  return resolveConfig(checked.value, dirname(resolve(file)));
}

/** Cross-checks a schema-valid configuration and reads the files it names. */
async function resolveConfig(c: GatewayConfig, baseDir: string): Promise<ConfigResult> {
  const problems: ConfigProblem[] = [];
  const control = c.control;
  if (control.rootKeys && control.jwksFile) problems.push({ pointer: '/control', message: 'give rootKeys or jwksFile, not both' });
  if (!control.rootKeys && !control.jwksFile) problems.push({ pointer: '/control/jwksFile', message: 'is required (or rootKeys)' });
  const trustedRoots: RootKey[] = [];
  for (const [i, file] of (control.rootKeys ?? []).entries()) {
    const read = await readJwks(resolve(baseDir, file));
    if (typeof read === 'string') problems.push({ pointer: `/control/rootKeys/${i}`, message: read });
    else trustedRoots.push(...(read.keys as RootKey[]));
  }
  for (const [i, mirror] of (control.mirrors ?? []).entries()) {
    if (!URL.canParse(mirror) || !/^https?:$/.test(new URL(mirror).protocol))
      // The value itself may have come from the environment: named by its pointer only.
      problems.push({ pointer: `/control/mirrors/${i}`, message: 'is not an http(s) URL' });
  }
  let trustedKeys: TrustedKeys = { keys: [] };
  if (control.jwksFile) {
    const read = await readJwks(resolve(baseDir, control.jwksFile));
    if (typeof read === 'string') problems.push({ pointer: '/control/jwksFile', message: read });
    else trustedKeys = read;
  }

  const clients: ResolvedClient[] = [];
  const names = new Map<string, number>();
  const digests = new Map<string, number>();
  c.clients.forEach((entry, i) => {
    const at = `/clients/${i}`;
    if (entry.key !== undefined && entry.keySha256 !== undefined) problems.push({ pointer: at, message: 'give key or keySha256, not both' });
    const seen = names.get(entry.name);
    if (seen !== undefined) problems.push({ pointer: `${at}/name`, message: `repeats the name of /clients/${seen}` });
    else names.set(entry.name, i);
    const digest = keyDigest(entry.key, entry.keySha256);
    if (digest) {
      const hex = digest.toString('hex');
      const other = digests.get(hex);
      if (other !== undefined)
        problems.push({ pointer: `${at}/${entry.key !== undefined ? 'key' : 'keySha256'}`, message: `is the same key as /clients/${other}` });
      else digests.set(hex, i);
    }
    clients.push(resolveClient(entry, digest));
  });

  let listen: ResolvedConfig['listen'];
  if ('http' in c.listen) {
    const h = c.listen.http;
    // A client that signs in with OAuth only is told apart by its token's claims instead.
    const byToken = clientsReachedByOAuth(c.auth?.oauth);
    c.clients.forEach((entry, i) => {
      if (entry.key === undefined && entry.keySha256 === undefined && !byToken.has(entry.name))
        problems.push({
          pointer: `/clients/${i}`,
          message: 'needs key or keySha256 (or an /auth/oauth/clients mapping): HTTP clients are told apart by their key',
        });
    });
    listen = { kind: 'http', host: h.host ?? '127.0.0.1', port: h.port, path: h.path ?? '/mcp', allowedOrigins: h.allowedOrigins ?? [] };
  } else {
    const wanted = c.listen.stdio.client;
    const client = clients.find((x) => x.name === wanted);
    if (!client) problems.push({ pointer: '/listen/stdio/client', message: 'names no entry of /clients' });
    listen = { kind: 'stdio', client: client ?? clients[0] };
  }

  const upstreams = new Map<string, GatewayUpstream>(Object.entries(c.upstreams));
  for (const [id, up] of upstreams) {
    if (up.kind !== 'stdio') continue;
    // The gateway's own settings (its runtime token among them) never reach an upstream.
    (up.env ?? []).forEach((name, i) => {
      if (/^TOOLGATE_/i.test(name))
        problems.push({ pointer: `/upstreams/${escapePointer(id)}/env/${i}`, message: 'TOOLGATE_* variables are not passed to upstream servers' });
    });
  }
  const oauth = resolveOAuth(c.auth?.oauth, clients, listen.kind === 'http', problems);
  let metricsKeyDigest: Buffer | null = null;
  if (c.metrics) {
    if (c.metrics.key !== undefined && c.metrics.keySha256 !== undefined) problems.push({ pointer: '/metrics', message: 'give key or keySha256, not both' });
    if (c.metrics.key === undefined && c.metrics.keySha256 === undefined) problems.push({ pointer: '/metrics/key', message: 'is required (or keySha256)' });
    metricsKeyDigest = keyDigest(c.metrics.key, c.metrics.keySha256);
  }
  if (problems.length > 0) return { ok: false, problems };

  const where = listen.kind === 'http' ? String(listen.port) : 'stdio';
  let runtimeId = control.runtimeId ?? `${safeHost()}:${where}`;
  if (!runtimeId.startsWith('gateway:')) runtimeId = `gateway:${runtimeId}`;
  return {
    ok: true,
    config: {
      control: {
        url: control.url,
        tenant: control.tenant,
        token: control.token,
        trust: control.rootKeys ? { trustedRoots } : { trustedKeys },
        mirrors: control.mirrors ?? [],
        cacheDir: resolve(baseDir, control.cacheDir),
        runtimeId: runtimeId.slice(0, 128),
      },
      listen,
      clients,
      upstreams,
      timeouts: { callMs: c.timeouts?.callMs ?? 30_000, approvalMs: c.timeouts?.approvalMs ?? 120_000, relistMs: c.timeouts?.relistMs ?? 60_000 },
      limits: { sessionsPerClient: c.limits?.sessionsPerClient ?? 100, pendingApprovalsPerClient: c.limits?.pendingApprovalsPerClient ?? 10 },
      oauth,
      metricsKeyDigest,
    },
  };
}

function resolveClient(entry: GatewayClient, digest: Buffer | null): ResolvedClient {
  const request: Omit<EvaluationRequest, 'state'> = { subject: entry.subject };
  if (entry.groups !== undefined) request.groups = entry.groups;
  if (entry.facts !== undefined) request.facts = entry.facts;
  if (entry.profile !== undefined) request.profile = entry.profile;
  if (entry.connections !== undefined) request.allowedConnectionIds = entry.connections;
  return { name: entry.name, subject: entry.subject, keyDigest: digest, request, initialState: entry.state ?? 'undefined' };
}

/** sha-256 of a key, or the configured digest. */
function keyDigest(key: string | undefined, keySha256: string | undefined): Buffer | null {
  if (key !== undefined) return createHash('sha256').update(key, 'utf8').digest();
  if (keySha256 !== undefined) return Buffer.from(keySha256.replace(/^sha256:/, ''), 'hex');
  return null;
}

async function readJwks(file: string): Promise<TrustedKeys | string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  try {
    const parsed = JSON.parse(text) as { keys?: unknown; kty?: unknown };
    // A root file may hold one JWK; a JWKS file holds several.
    if (parsed && typeof parsed.kty === 'string') return { keys: [parsed] } as TrustedKeys;
    if (!parsed || !Array.isArray(parsed.keys) || parsed.keys.length === 0) return 'is not a JWK or a JWKS with at least one key';
    return parsed as TrustedKeys;
  } catch {
    return 'is not valid JSON';
  }
}

/** Replaces `${NAME}` in every string; an unset variable is a problem at that string's pointer. */
function substitute(value: unknown, pointer: string, env: Record<string, string | undefined>, problems: ConfigProblem[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (whole, name: string) => {
      const v = env[name];
      if (v === undefined) {
        problems.push({ pointer, message: `names the environment variable ${name}, which is not set` });
        return whole;
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, `${pointer}/${i}`, env, problems));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // Kept as an own member, so the schema refuses a `__proto__` key by its pointer instead of reading through it.
    for (const [k, v] of Object.entries(value)) setOwnMember(out, k, substitute(v, `${pointer}/${escapePointer(k)}`, env, problems));
    return out;
  }
  return value;
}

function safeHost(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '') || 'host'
  );
}

function fail(pointer: string, message: string): ConfigResult {
  return { ok: false, problems: [{ pointer, message }] };
}
