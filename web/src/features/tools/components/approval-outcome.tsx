import { useEffect, useRef } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { explainFiltered } from '../../../lib/filter-reasons.ts';
import { href } from '../../../lib/router.ts';
import { useToolReach } from '../api/get-tool-reach.ts';

/**
 * The answer to an approval, from the simulator: which roles now see the tool, or why it is
 * still hidden from each, with where to fix it. Takes focus when it appears.
 */
export function ApprovalOutcome({ tools }: { tools: Tool[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.focus();
  }, []);
  return (
    <div ref={box} tabIndex={-1} className="approval-outcome notice notice-success" role="status" aria-label="Approval result">
      <p>
        <strong>Approved {tools.length === 1 ? tools[0]!.id : `${tools.length} tools`}.</strong>
      </p>
      <ul>
        {tools.map((t) => (
          <ToolReach key={t.id} tool={t} />
        ))}
      </ul>
    </div>
  );
}

function ToolReach({ tool }: { tool: Tool }) {
  const reach = useToolReach(tool.id, tool.version ?? 0);
  const link = (
    <a href={href(`/tools/${encodeURIComponent(tool.id)}`)} className="mono">
      {tool.id}
    </a>
  );
  if (reach.isPending) return <li>{link}: checking who can see it…</li>;
  if (reach.error) return <li>{link}: the simulator could not answer.</li>;
  const visible = reach.data.filter((r) => r.visible);
  const hidden = reach.data.filter((r) => !r.visible);
  return (
    <li>
      {link}:{' '}
      {visible.length ? (
        <span>now visible to roles {visible.map((r) => `${r.role} (${r.tenant}, ${r.decision})`).join(', ')}.</span>
      ) : (
        <span>still hidden from every role.</span>
      )}
      {hidden.length ? (
        <ul className="small">
          {hidden.map((r) => {
            const why = explainFiltered(r.reason ?? 'group', { tenant: r.tenant, toolId: tool.id, tool, subject: r.subject, policy: r.policy });
            return (
              <li key={`${r.tenant}/${r.role}`}>
                Still hidden from role {r.role} ({r.tenant}) because: {why.text} {why.fix?.href ? <a href={why.fix.href}>{why.fix.label}</a> : null}
              </li>
            );
          })}
        </ul>
      ) : null}
    </li>
  );
}
