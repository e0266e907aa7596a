import { useId, useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { CheckGroup } from '../../../components/check-group.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { effects, hints } from '../../../lib/schema.ts';
import { useGroups } from '../../groups/api/get-groups.ts';
import { useApproveTools, type ApprovalDecisions, type BulkApproval } from '../api/approve-tool.ts';

const effectWords: Record<Tool['effect'], string> = {
  read_only: 'reads only; changes nothing',
  state_change: 'changes state inside the workflow',
  external_side_effect: 'acts outside: sends, writes, pays, deletes',
};

/** What an MCP server says about its own tool (its annotations, kept as hints): shown, never trusted. */
function serverHints(tool: Tool): string[] {
  return Object.entries(tool.source?.hints ?? {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
}

/** Whether the tools' servers say different things about them (then each tool's claims are listed). */
function hintsDisagree(tools: Tool[]): boolean {
  const said = new Set(tools.map((t) => JSON.stringify(serverHints(t))));
  return said.size > 1;
}

/**
 * Approval as a short form: the admin decides the effect (the server's hints are only shown), the
 * redaction allowlist, the groups and a reason, for one tool or several with the same answers.
 */
export function ApprovalForm({ tools, onApproved, onCancel }: { tools: Tool[]; onApproved: (result: BulkApproval) => void; onCancel?: () => void }) {
  const ids = useId();
  const groups = useGroups();
  const approve = useApproveTools();
  const one = tools.length === 1 ? tools[0] : undefined;
  const [effect, setEffect] = useState<Tool['effect'] | ''>('');
  const [redaction, setRedaction] = useState<string[]>(one?.redaction?.allow ?? []);
  const [chosenGroups, setGroups] = useState<string[]>(one?.groups ?? ['default']);
  const [reason, setReason] = useState('');
  const [failed, setFailed] = useState<BulkApproval['failed']>([]);
  const title = one ? `Approve ${one.id}` : `Approve ${tools.length} tools`;
  const suggested = [...new Set(tools.map((t) => t.effect))];
  const hinted = serverHints(tools[0]!);
  const mixed = tools.length > 1 && hintsDisagree(tools);
  return (
    <form
      className="approval-form card"
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault();
        if (!effect) return;
        setFailed([]);
        const decisions: ApprovalDecisions = { effect, redaction: { allow: redaction }, groups: chosenGroups, reason };
        // mutateAsync, not mutate's callbacks: this form unmounts as soon as its tool leaves the
        // queue, and the answer must still reach the page that shows it.
        approve.mutateAsync({ tools, decisions }).then(
          (result) => {
            setFailed(result.failed);
            onApproved(result);
          },
          () => undefined,
        );
      }}
    >
      <h3>{title}</h3>
      <fieldset className="section">
        <legend>Effect (you decide)</legend>
        {mixed ? (
          <>
            <p className="hint">The servers' own claims are not trusted, and they differ from tool to tool: one effect applies to all {tools.length}.</p>
            <div className="table-wrap">
              <DataTable label="What each server says" columns={['Tool', 'Its server says', 'Recorded on import']} compact>
                {tools.map((t) => (
                  <tr key={t.id}>
                    <td className="mono">{t.id}</td>
                    <td className="small">{serverHints(t).length ? serverHints(t).join(', ') : <span className="muted">no hints</span>}</td>
                    <td>{t.effect.replace(/_/g, ' ')}</td>
                  </tr>
                ))}
              </DataTable>
            </div>
          </>
        ) : (
          <p className="hint">
            The server's own claims are not trusted.{' '}
            {hinted.length ? (
              <>
                {tools.length > 1 ? `All ${tools.length} say` : 'It says'}:{' '}
                {hinted.map((h) => (
                  <code key={h}>{h} </code>
                ))}
              </>
            ) : (
              'It gives no hints.'
            )}{' '}
            Recorded on import: {suggested.join(', ')}.
          </p>
        )}
        {effects.map((e) => (
          <label key={e} className="check">
            <input type="radio" name={`${ids}-effect`} required checked={effect === e} onChange={() => setEffect(e)} /> {e.replace(/_/g, ' ')}
            <span className="muted small"> — {effectWords[e]}</span>
          </label>
        ))}
      </fieldset>
      <ListInput
        label="Output fields kept (redaction allowlist)"
        value={redaction}
        onChange={setRedaction}
        placeholder="title, items[].id"
        hint={`${hints.redaction} Empty keeps no output field.`}
      />
      <CheckGroup legend="Groups" options={(groups.data ?? []).map((g) => g.name)} value={chosenGroups} onChange={setGroups} />
      <TextField label="Reason for approving (required)" required value={reason} onChange={setReason} />
      <div className="button-row">
        <button type="submit" className="primary" disabled={approve.isPending || !effect || !reason.trim()}>
          {approve.isPending ? 'Approving…' : one ? 'Approve' : `Approve ${tools.length} tools`}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
      {failed.length ? (
        <div role="alert" className="notice notice-error">
          {failed.length} not approved:
          <ul>
            {failed.map((f) => (
              <li key={f.id}>
                <code>{f.id}</code> <Notice error={f.error} />
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <Notice error={approve.error} />
      )}
    </form>
  );
}
