import { useId, useState } from 'react';
import type { McpServer } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CreateForm } from '../../../components/create-form.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import { formats, limits } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { ReviewQueue } from '../../tools/components/review-queue.tsx';
import { useMcpServers } from '../api/get-mcp-servers.ts';
import { useCreateMcpServer, useDeleteMcpServer, useSyncMcpServer } from '../api/save-mcp-server.ts';

export function McpPage({ session }: { session: Session }) {
  const servers = useMcpServers();
  const editable = canEditInventory(session);
  return (
    <section className="page">
      <PageHeader title="MCP servers" subtitle="Imported tools arrive quarantined; nothing is enabled without an admin's approval." />
      <div className="split">
        <div>
          {servers.isPending ? <Loading what="MCP servers" /> : null}
          {servers.error ? <Notice error={servers.error} /> : null}
          {servers.data?.length === 0 ? <p className="muted">No MCP server yet.</p> : null}
          {servers.data?.map((s) => (
            <ServerCard key={s.id} server={s} editable={editable} />
          ))}
          <ReviewQueue editable={editable} />
        </div>
        {editable ? (
          <aside className="side-panel">
            <NewServer />
          </aside>
        ) : null}
      </div>
    </section>
  );
}

function ServerCard({ server, editable }: { server: McpServer; editable: boolean }) {
  const sync = useSyncMcpServer();
  const del = useDeleteMcpServer();
  const s = server.lastSync;
  return (
    <article className="card" aria-label={`MCP server ${server.id}`}>
      <header className="card-header">
        <h2>
          {server.label} <span className="muted mono small">{server.id}</span>
        </h2>
        {s ? <Badge tone={s.ok ? 'ok' : 'bad'}>{s.ok ? 'last sync ok' : 'last sync failed'}</Badge> : <Badge tone="muted">never synced</Badge>}
      </header>
      <p className="mono small transport" data-testid="transport">
        {server.transport.kind === 'stdio'
          ? `stdio: ${server.transport.command} ${(server.transport.args ?? []).join(' ')}${server.transport.env?.length ? ` · env ${server.transport.env.join(', ')}` : ''}`
          : `http: ${server.transport.url}`}
        {server.syncIntervalSeconds ? ` · every ${server.syncIntervalSeconds}s` : ''}
      </p>
      {s ? (
        <p className="small">
          {new Date(s.at).toLocaleString()}: {s.added?.length ?? 0} added, {s.changed?.length ?? 0} changed, {s.removed?.length ?? 0} removed
          {s.rejected?.length ? `, ${s.rejected.length} rejected (${s.rejected.map((r) => `${r.name}: ${r.message}`).join('; ')})` : ''}
          {s.error ? <span className="field-error"> — {s.error}</span> : null}
        </p>
      ) : null}
      {editable ? (
        <div className="button-row">
          <button type="button" className="primary" disabled={sync.isPending} onClick={() => sync.mutate(server.id)}>
            {sync.isPending ? 'Syncing…' : `Sync ${server.id}`}
          </button>
          <a className="button" href={href(`/tools?source=mcp&q=${encodeURIComponent(`mcp__${server.id}__`)}`)}>
            Its tools
          </a>
          <ConfirmButton question={`Remove MCP server ${server.id}?`} onConfirm={() => del.mutate(server)}>
            Remove
          </ConfirmButton>
        </div>
      ) : null}
      <Notice error={sync.error ?? del.error} success={sync.isSuccess ? `Synced ${server.id}.` : null} />
    </article>
  );
}

function NewServer() {
  const create = useCreateMcpServer();
  const ids = useId();
  const [id, setId] = useState('');
  const [label, setLabel] = useState('');
  const [kind, setKind] = useState<'stdio' | 'http'>('stdio');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState<string[]>([]);
  const [env, setEnv] = useState<string[]>([]);
  const [url, setUrl] = useState('');
  const [interval, setInterval] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  return (
    <CreateForm
      title="Add MCP server"
      submit="Add server"
      busy={create.isPending}
      error={create.error}
      success={msg}
      onSubmit={() => {
        setMsg(null);
        const server: McpServer = {
          id,
          label,
          transport: kind === 'stdio' ? { kind, command, args, env } : { kind, url },
          ...(interval ? { syncIntervalSeconds: Number(interval) } : {}),
        };
        create.mutate(server, {
          onSuccess: (s) => {
            setMsg(`Added ${s.id}. Sync it to import its tools.`);
            setId('');
            setLabel('');
            setCommand('');
            setArgs([]);
            setEnv([]);
            setUrl('');
            setInterval('');
          },
        });
      }}
    >
      <TextField label="Server id" required format={formats.mcpServerId} value={id} onChange={setId} />
      <TextField label="Label" required maxLength={limits.mcpLabelMax} value={label} onChange={setLabel} />
      <fieldset className="section">
        <legend>Transport</legend>
        <label className="check">
          <input type="radio" name={`${ids}-kind`} checked={kind === 'stdio'} onChange={() => setKind('stdio')} /> stdio (a local command)
        </label>
        <label className="check">
          <input type="radio" name={`${ids}-kind`} checked={kind === 'http'} onChange={() => setKind('http')} /> HTTP
        </label>
        {kind === 'stdio' ? (
          <>
            <TextField
              label="Command (absolute path)"
              required
              value={command}
              onChange={setCommand}
              placeholder="/usr/local/bin/mcp-server-memory"
              aria-describedby={`${ids}-command-hint`}
            />
            <p id={`${ids}-command-hint`} className="hint">
              Only commands the operator lists in <code>TOOLGATE_MCP_COMMANDS</code> run, by absolute path: a bare <code>npx</code> or <code>uvx</code> is
              refused. If yours is refused, the answer names the commands this server allows.
            </p>
            <ListInput label="Arguments" value={args} onChange={setArgs} placeholder="-y, @modelcontextprotocol/server-memory" />
            <ListInput
              label="Environment variable names"
              value={env}
              onChange={setEnv}
              hint="Names only: values come from the server's environment and are never stored."
            />
          </>
        ) : (
          <TextField label="URL" type="url" required value={url} onChange={setUrl} placeholder="https://" />
        )}
      </fieldset>
      <TextField label="Re-sync every (seconds, optional)" type="number" min={30} value={interval} onChange={setInterval} />
    </CreateForm>
  );
}
