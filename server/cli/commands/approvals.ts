import { parseArgs } from 'node:util';
import type { Approval } from '../../../policy-schemas/types.gen.ts';
import { ServerRefusal, clientOptionsFromEnv, createApiClient } from '../../config-as-code/api-client.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = [
  'usage: toolgate approvals list --tenant T [--state pending|decided|approved|denied|expired] [--json]',
  '       toolgate approvals approve ID --tenant T --reason TEXT',
  '       toolgate approvals deny ID --tenant T --reason TEXT',
  '(with TOOLGATE_URL and TOOLGATE_TOKEN set: a person’s token, an admin or an editor of the tenant;',
  ' where the server uses single sign-on, a token cannot approve or deny: decide in the console, signed in as yourself)',
].join('\n');

type Deps = { env?: NodeJS.ProcessEnv; fetch?: typeof fetch };

/**
 * `toolgate approvals list|approve|deny`: a person's decisions on single calls from a terminal,
 * over the HTTP API. `list` shows the queue (subject, tool, the rule that asked, age and, for
 * those who may decide, the arguments); `approve`/`deny` need a reason, kept in the audit log.
 */
export async function run(args: string[], out: Output = consoleOutput, deps: Deps = {}): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { tenant: { type: 'string' }, state: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
    });
  } catch (err) {
    out.error(`toolgate approvals: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [action, id] = positionals;
  if (!values.tenant || !['list', 'approve', 'deny'].includes(action ?? '') || (action !== 'list' && !id) || positionals.length > (action === 'list' ? 1 : 2)) {
    out.error(USAGE);
    return 2;
  }
  const reason = values.reason?.trim();
  if (action !== 'list' && !reason) {
    out.error(`toolgate approvals: --reason is required (it goes into the audit log with your decision)\n${USAGE}`);
    return 2;
  }
  const options = clientOptionsFromEnv(deps.env ?? process.env);
  if (typeof options === 'string') {
    out.error(`toolgate approvals: ${options}`);
    return 2;
  }
  const api = createApiClient({ ...options, fetch: deps.fetch });
  const base = `/v1/tenants/${encodeURIComponent(values.tenant)}/approvals`;
  try {
    if (action === 'list') {
      const items: Approval[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ state: values.state ?? 'pending', limit: '100', ...(cursor ? { cursor } : {}) });
        const page = (await api.get(`${base}?${query}`)) as { items: Approval[]; nextCursor: string | null };
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      if (values.json) {
        out.log(JSON.stringify(items, null, 2));
        return 0;
      }
      if (items.length === 0) out.log(`no ${values.state ?? 'pending'} approval requests in ${values.tenant}`);
      for (const a of items) for (const line of describe(a)) out.log(line);
      return 0;
    }
    const { json } = await api.post(`${base}/${encodeURIComponent(id)}/${action}`, { reason });
    const a = json as Approval;
    out.log(`${a.state} ${a.id}: ${a.subject} → ${a.tool}${a.receipt ? ` (receipt valid until ${a.receipt.payload.expiresAt})` : ''}`);
    return 0;
  } catch (err) {
    out.error(`toolgate approvals: ${err instanceof ServerRefusal ? err.lines().join('\n') : (err as Error).message}`);
    return 1;
  }
}

function describe(a: Approval): string[] {
  const lines = [`${a.id}  ${a.state}  ${age(a.requestedAt)} ago  ${a.subject} → ${a.tool}`, `  asked by: ${a.reason}`];
  if (a.arguments) lines.push(`  arguments: ${JSON.stringify(a.arguments)}`);
  if (a.decidedBy) lines.push(`  ${a.state} by ${a.decidedBy}${a.decisionReason ? `: ${a.decisionReason}` : ''}`);
  return lines;
}

function age(at: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(at)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}
