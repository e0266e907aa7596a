import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { Bundle, EvaluationRequest } from '../../../policy-schemas/types.gen.ts';
import { createView } from '../../../runtime/decide.ts';
import { toAnthropicTools, toOpenAITools } from '../../../runtime/encoders.ts';
import { loadBundle } from '../../../runtime/load-bundle.ts';
import { ENCODER_LABELS, WIRE_ENCODERS, describeFit, providerCompatibility } from '../../../runtime/provider-compatibility.ts';
import { compileBundle } from '../../compiler/compile-bundle.ts';
import { latestBundleRow } from '../../store/bundles.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { settingsFromEnv } from '../../startup.ts';
import { toolStore } from '../../store/inventory.ts';
import { loadDraftSnapshot } from '../../store/snapshot.ts';
import { BUNDLE_MAX_DEPTH, readJsonFile } from '../read-json-file.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = `usage: toolgate tools list [--tenant T | --bundle FILE] [--draft] [--subject S] [--groups a,b] [--state X]
                          [--facts k=v,...] [--profile P] [--connections c1,c2] [--format openai|anthropic]`;

/**
 * `toolgate tools list`: with a subject, exactly the tool specs a model would be given (the
 * visible tools of the tenant's latest published bundle, or of its draft with --draft, or of a
 * bundle file) in the OpenAI or Anthropic wire format, with a line on stderr for each tool that
 * format's API would refuse; without one, the inventory, each tool with the name its MCP server
 * gives it and which wire encoders carry its input schema unchanged.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  const [sub, ...rest] = args;
  let values;
  try {
    if (sub !== 'list') throw new Error('unknown subcommand');
    ({ values } = parseArgs({
      args: rest,
      options: {
        tenant: { type: 'string' },
        bundle: { type: 'string' },
        draft: { type: 'boolean', default: false },
        subject: { type: 'string' },
        groups: { type: 'string' },
        state: { type: 'string' },
        facts: { type: 'string' },
        profile: { type: 'string' },
        connections: { type: 'string' },
        format: { type: 'string', default: 'openai' },
      },
    }));
  } catch (err) {
    out.error(`toolgate tools: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.format !== 'openai' && values.format !== 'anthropic') {
    out.error(`toolgate tools list: --format must be openai or anthropic\n${USAGE}`);
    return 2;
  }

  if (values.subject === undefined) {
    if (values.bundle) {
      // Read as a runtime reads it (either format, defaults filled in), not as written.
      let listed;
      try {
        listed = loadBundle(readJsonFile(values.bundle, BUNDLE_MAX_DEPTH) as Bundle, { inputValidators: false });
      } catch (err) {
        out.error(`toolgate tools: ${values.bundle} is not a usable bundle: ${(err as Error).message}`);
        return 1;
      }
      out.log(
        JSON.stringify(
          listed.tools.map((t) =>
            t.def === null
              ? { id: t.id, excluded: t.excluded }
              : { id: t.id, ...originalName(t.def.source), effect: t.def.effect, groups: t.def.groups, providers: providers(t.def.inputSchema) },
          ),
          null,
          2,
        ),
      );
      return 0;
    }
    return withDb(async (db) => {
      const tools = await toolStore.list(db.db);
      out.log(
        JSON.stringify(
          tools.map((t) => ({
            id: t.id,
            ...originalName(t.source),
            status: t.status ?? 'active',
            effect: t.effect,
            groups: t.groups ?? ['default'],
            providers: providers(t.inputSchema),
          })),
          null,
          2,
        ),
      );
      return 0;
    });
  }

  const request: Record<string, unknown> = { subject: values.subject };
  if (values.groups !== undefined) request.groups = values.groups === '' ? [] : values.groups.split(',');
  if (values.state !== undefined) request.state = values.state;
  if (values.profile !== undefined) request.profile = values.profile;
  if (values.connections !== undefined) request.allowedConnectionIds = values.connections === '' ? [] : values.connections.split(',');
  if (values.facts !== undefined) {
    const facts: Record<string, string | number | boolean> = {};
    for (const pair of values.facts.split(',').filter(Boolean)) {
      const eq = pair.indexOf('=');
      if (eq < 1) {
        out.error(`toolgate tools list: --facts takes k=v pairs, not "${pair}"`);
        return 2;
      }
      const raw = pair.slice(eq + 1);
      facts[pair.slice(0, eq)] = raw === 'true' ? true : raw === 'false' ? false : raw !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    }
    request.facts = facts;
  }
  const check = validate<EvaluationRequest>('evaluation-request', request);
  if (!check.ok) {
    for (const e of check.errors) out.error(`toolgate tools list: ${e.pointer}: ${e.message}`);
    return 2;
  }

  let bundle: Bundle | undefined;
  if (values.bundle) {
    bundle = readJsonFile(values.bundle, BUNDLE_MAX_DEPTH) as Bundle;
  } else if (values.tenant) {
    const tenant = values.tenant;
    const code = await withDb(async (db) => {
      if (values.draft) {
        const snapshot = await loadDraftSnapshot(db.db, tenant);
        if (!snapshot) return fail(out, `tenant ${tenant} does not exist`);
        const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
        if (!r.ok) return fail(out, `the draft of ${tenant} does not compile: ${r.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ')}`);
        bundle = r.bundle;
      } else {
        const row = await latestBundleRow(db.db, tenant);
        if (!row) return fail(out, `tenant ${tenant} has no published bundle (use --draft for the unpublished draft)`);
        bundle = JSON.parse(row.content) as Bundle;
      }
      return 0;
    });
    if (code !== 0) return code;
  } else {
    out.error(`toolgate tools list: --subject needs --tenant or --bundle\n${USAGE}`);
    return 2;
  }
  const view = createView(loadBundle(bundle!), check.value);
  if (view.result.rejected) return fail(out, `${view.result.rejected.reason}: ${view.result.rejected.groups.join(', ')}`);
  const specs = values.format === 'openai' ? toOpenAITools(view) : toAnthropicTools(view);
  out.log(JSON.stringify(specs, null, 2));
  // The specs are printed as the model would get them; what the provider would refuse is said apart.
  const encoder = values.format === 'openai' ? 'openai' : 'anthropic';
  for (const spec of specs) {
    const [name, schema] = 'function' in spec ? [spec.function.name, spec.function.parameters] : [spec.name, spec.input_schema];
    const fit = providerCompatibility(schema)[encoder];
    if (!fit.carried) out.error(`toolgate tools list: ${name}: ${ENCODER_LABELS[encoder]} ${describeFit(fit)}`);
  }
  return 0;
}

/** An imported tool's name on its MCP server, where the id had to map it. */
function originalName(source: { kind?: string; originalName?: string } | undefined): { originalName?: string } {
  return source?.kind === 'mcp' && source.originalName !== undefined ? { originalName: source.originalName } : {};
}

/** Per wire encoder, "carried unchanged" or where the input schema stops it. */
function providers(inputSchema: unknown): Record<string, string> {
  const fits = providerCompatibility(inputSchema);
  return Object.fromEntries(WIRE_ENCODERS.map((e) => [e, describeFit(fits[e])]));
}

function fail(out: Output, message: string): number {
  out.error(`toolgate tools list: ${message}`);
  return 1;
}

async function withDb(fn: (db: ToolgateDatabase) => Promise<number>): Promise<number> {
  const database = new ToolgateDatabase(settingsFromEnv().dbFile);
  try {
    await database.migrateToLatest();
    return await fn(database);
  } finally {
    await database.close();
  }
}
