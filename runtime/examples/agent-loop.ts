// An agent loop gated by Toolgate: the tool list comes from the bundle client, every tool call
// the model makes goes through decide(), and the workflow state follows nextState(). The "model"
// is a script, so no LLM service is needed.
//
// Run against a server (for example `npm run dev` with its demo data):
//   1. Publish a bundle for the tenant (console, or POST /v1/tenants/acme-research/bundles).
//   2. Mint a runtime token: POST /v1/tokens {"label":"agent","role":"runtime","tenants":["acme-research"]}
//   3. TOOLGATE_URL=http://127.0.0.1:8787 TOOLGATE_TENANT=acme-research TOOLGATE_TOKEN=<token> \
//        npx tsx runtime/examples/agent-loop.ts
//
// Environment:
//   TOOLGATE_URL        server base URL (default http://127.0.0.1:8787)
//   TOOLGATE_TENANT     tenant to pull (default acme-research)
//   TOOLGATE_TOKEN      runtime token for that tenant (required)
//   TOOLGATE_SUBJECT    who the agent is (default agent:research-bot)
//   TOOLGATE_GROUPS     comma-separated groups to request (default: the default group)
//   TOOLGATE_ROOT_FILE  the root public key(s) (`toolgate keys root` > root.json): the signing keys come
//                       from the root-signed key set, so key rotation needs nothing here.
//   TOOLGATE_JWKS_FILE  or fixed signing keys (a JWKS file). Without either, the root the server's key
//                       set names is trusted on first use, which is fine for a demo only.
//   TOOLGATE_CACHE_DIR  where the last good bundle is kept (default ./.toolgate-cache)
//   TOOLGATE_APPROVAL_WAIT_MS  how long a call that needs approval waits for a person (default 120000):
//                       the agent opens an approval request, a person approves or denies it in the
//                       console (or `toolgate approvals approve <id> --tenant <tenant> --reason …`), and the receipt lets
//                       exactly that call through once
//   TOOLGATE_WAIT_MS    how long to wait for a first good bundle before starting (default 10000)
import { readFile } from 'node:fs/promises';
import { createBundleClient } from '../client/index.ts';
import type { BundleClient, BundleClientOptions, TrustedKeys } from '../client/index.ts';
import type { CallDecision, ToolCall, ToolView } from '../decide.ts';
import { toOpenAITools } from '../encoders.ts';
import type { OpenAITool } from '../encoders.ts';
import { nextState } from '../next-state.ts';
import { redact } from '../redact.ts';

type ModelTurn = { say: string; calls: ToolCall[] };

const env = process.env;
const url = env.TOOLGATE_URL ?? 'http://127.0.0.1:8787';
const tenant = env.TOOLGATE_TENANT ?? 'acme-research';
const subject = env.TOOLGATE_SUBJECT ?? 'agent:research-bot';
const groups = env.TOOLGATE_GROUPS
  ? env.TOOLGATE_GROUPS.split(',')
      .map((g) => g.trim())
      .filter(Boolean)
  : undefined;

async function main(): Promise<number> {
  const token = env.TOOLGATE_TOKEN;
  if (!token) {
    console.error('Set TOOLGATE_TOKEN to a runtime token for the tenant (see the header of this file).');
    return 2;
  }
  const client = await createBundleClient({
    url,
    tenant,
    token,
    ...(await trust()),
    cacheDir: env.TOOLGATE_CACHE_DIR ?? './.toolgate-cache',
    runtimeId: `agent-loop-${process.pid}`,
  });
  try {
    await firstBundle(client, Number(env.TOOLGATE_WAIT_MS ?? 10_000));
    const s = client.status();
    console.log(
      `bundle: ${s.version === null ? 'none' : `v${s.version} ${s.revision}`} · health ${s.health}${s.lastError ? ` · last error ${s.lastError}` : ''}`,
    );
    await conversation(client);
  } finally {
    await client.close();
  }
  return 0;
}

/** One scripted conversation: each turn sees the tools its state allows and every call is gated. */
async function conversation(client: BundleClient): Promise<void> {
  let state: string | undefined;
  for (let turn = 0; ; turn++) {
    const view = client.view({ subject, ...(groups ? { groups } : {}), ...(state ? { state } : {}) });
    const tools = view ? toOpenAITools(view) : [];
    console.log(
      `\nturn ${turn + 1} · state ${state ?? 'undefined'} · the model sees ${tools.length} tool(s): ${tools.map((t) => t.function.name).join(', ') || '(none)'}`,
    );
    if (view?.result.rejected) console.log(`  request rejected: ${view.result.rejected.reason} ${view.result.rejected.groups.join(', ')}`);
    const reply = scriptedModel(turn, tools);
    console.log(`  model: ${reply.say}`);
    if (reply.calls.length === 0) return;
    for (const call of reply.calls) {
      // Without a good bundle client.decide denies every call.
      let d = view ? client.decide(view, call) : client.decide({ subject }, call);
      console.log(`  ${call.name} → ${describe(d)}`);
      if (d.decision === 'require_approval') d = await askPerson(client, view!, call, d);
      if (d.decision !== 'allow') continue;
      const output = execute(call);
      const loaded = view!.loaded;
      console.log(`    result (redacted for logs): ${JSON.stringify(redact(loaded, call.name, output))}`);
      state = nextState(loaded, state, call.name);
    }
  }
}

/**
 * The stand-in for an LLM: first uses a tool it was offered, then tries things a real model gets
 * wrong (a tool it was not offered, malformed arguments), then answers.
 */
function scriptedModel(turn: number, tools: OpenAITool[]): ModelTurn {
  const first = tools[0];
  if (turn === 0) {
    if (!first) return { say: 'I have no tools, so I will answer from what I know.', calls: [] };
    return {
      say: `Let me use ${first.function.name}.`,
      calls: [{ toolCallId: 'call_1', name: first.function.name, arguments: JSON.stringify(sampleArguments(first.function.parameters)) }],
    };
  }
  if (turn === 1) {
    const calls: ToolCall[] = [{ toolCallId: 'call_2', name: 'core__reset-workflow', arguments: '{}' }];
    if (first) calls.push({ toolCallId: 'call_3', name: first.function.name, arguments: '{"unterminated": ' });
    calls.push({ toolCallId: 'call_4', name: 'core__made_up_tool', arguments: '{}' });
    return { say: 'I will also try a few calls I was not offered or got wrong.', calls };
  }
  return { say: 'Done: here is my answer.', calls: [] };
}

function describe(d: CallDecision): string {
  if (d.decision !== 'deny') return d.decision;
  const where = d.errors?.length ? ` [${d.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}]` : '';
  return `deny (${d.errorCode}: ${d.message})${where}`;
}

/**
 * A call that needs approval waits for a person, out of band: the agent never approves itself. The
 * receipt a person's approval yields is checked offline by decide() and allows this one call.
 */
async function askPerson(client: BundleClient, view: ToolView, call: ToolCall, asked: CallDecision): Promise<CallDecision> {
  try {
    const outcome = await client.requestApproval(view, call, asked, {
      timeoutMs: Number(env.TOOLGATE_APPROVAL_WAIT_MS ?? 120_000),
      onOpened: (a) =>
        console.log(`    waiting for a person: approval request ${a.id} (console, or: toolgate approvals approve ${a.id} --tenant ${tenant} --reason …)`),
    });
    if (outcome.state !== 'approved') {
      console.log(
        `    ${call.name} not run: the approval request ${outcome.id} is ${outcome.state}${'reason' in outcome && outcome.reason ? ` (${outcome.reason})` : ''}`,
      );
      return { ...asked, decision: 'deny' };
    }
    const d = client.decide(view, call, { approval: outcome.receipt });
    console.log(`    approved by ${outcome.decidedBy}: ${call.name} → ${describe(d)}`);
    return d;
  } catch (err) {
    console.log(`    ${call.name} not run: could not ask for approval (${(err as Error).message})`);
    return { ...asked, decision: 'deny' };
  }
}

/** Pretends to run a tool; the output carries a field the redaction allowlist should strip. */
function execute(call: ToolCall): unknown {
  return {
    result: `ran ${call.name}`,
    items: [{ id: 1, title: 'first hit', internalNote: 'not for logs' }],
    entities: [{ id: 'e1', label: 'first entity', properties: { note: 'not for logs' } }],
    truncated: false,
    debugToken: 'not for logs',
  };
}

/** Minimal arguments that satisfy a JSON Schema's required fields. */
function sampleArguments(schema: Record<string, unknown>): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('const' in schema) return schema.const;
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const out: Record<string, unknown> = {};
      // Names are data: a property named `constructor` is the schema's own or none, and `__proto__` stays a member.
      for (const name of (schema.required ?? []) as string[]) {
        const value = sampleArguments(Object.hasOwn(props, name) ? props[name] : {});
        Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => sampleArguments((schema.items ?? {}) as Record<string, unknown>));
    case 'integer':
    case 'number':
      return Number(schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'string': {
      const min = Number(schema.minLength ?? 0);
      return min > 7 ? 'x'.repeat(min) : 'example'.slice(0, Number(schema.maxLength ?? 7));
    }
    default:
      return 'example';
  }
}

async function trust(): Promise<Pick<BundleClientOptions, 'trustedRoots' | 'trustedKeys'>> {
  if (env.TOOLGATE_ROOT_FILE)
    return { trustedRoots: (JSON.parse(await readFile(env.TOOLGATE_ROOT_FILE, 'utf8')) as { keys: NonNullable<BundleClientOptions['trustedRoots']> }).keys };
  if (env.TOOLGATE_JWKS_FILE) return { trustedKeys: JSON.parse(await readFile(env.TOOLGATE_JWKS_FILE, 'utf8')) as TrustedKeys };
  console.warn(`No TOOLGATE_ROOT_FILE: trusting the root that ${url}/.well-known/toolgate-keyset.json names now (demo only).`);
  const res = await fetch(`${url}/.well-known/toolgate-keyset.json`);
  if (!res.ok) throw new Error(`cannot fetch the server's key set: HTTP ${res.status}`);
  return { trustedRoots: ((await res.json()) as { roots: NonNullable<BundleClientOptions['trustedRoots']> }).roots };
}

/** Waits for the first good bundle (from the cache or the server), at most `ms`. */
function firstBundle(client: BundleClient, ms: number): Promise<void> {
  if (client.current() && client.status().health === 'fresh') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      offUpdate();
      offHealth();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const offUpdate = client.on('update', done);
    const offHealth = client.on('health', (s) => {
      if (s.health === 'fresh' || s.lastError) done();
    });
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`agent-loop: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
