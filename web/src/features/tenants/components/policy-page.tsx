import { useCallback, useMemo, useState } from 'react';
import type { TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { canEditTenant } from '../../../lib/permissions.ts';
import { useDraft } from '../../../lib/use-draft.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useGroups } from '../../groups/api/get-groups.ts';
import { useStates } from '../../states/api/get-states.ts';
import { useTools } from '../../tools/api/get-tools.ts';
import { TestResults } from '../../policy-tests/components/test-results.tsx';
import { usePolicy } from '../api/get-policy.ts';
import { PolicyEditor, policyFormId } from './policy-editor.tsx';
import { Simulator } from './simulator.tsx';

/** The tenant's draft policy with the simulator beside it. */
export function PolicyPage({ tenant, session }: { tenant: string; session: Session }) {
  const policy = usePolicy(tenant);
  if (policy.isPending) return <Loading what="policy" />;
  if (policy.error) return <Notice error={policy.error} />;
  return <PolicyWorkbench key={tenant} tenant={tenant} server={policy.data} session={session} />;
}

function PolicyWorkbench({ tenant, server, session }: { tenant: string; server: TenantPolicy; session: Session }) {
  const draft = useDraft<TenantPolicy>(server);
  const tools = useTools();
  const groups = useGroups();
  const states = useStates();
  // Kept by identity between renders: the editor's pattern previews and the simulator's rows are
  // memoised on them, so a checkbox repaints what it changed, not 5,000 tools.
  const toolIds = useMemo(() => (tools.data ?? []).filter((t) => t.status !== 'removed').map((t) => t.id), [tools.data]);
  const toolsById = useMemo(() => new Map((tools.data ?? []).map((t) => [t.id, t])), [tools.data]);
  // On a narrow window one of the two is shown at a time, so the simulator is one tap away.
  const [view, setView] = useState<'policy' | 'simulator'>('policy');
  const showRole = useCallback((role: string) => {
    setView('policy');
    requestAnimationFrame(() => {
      const card = [...document.querySelectorAll<HTMLElement>('section.role-card')].find((el) => el.getAttribute('aria-label') === `Role ${role}`);
      card?.scrollIntoView({ block: 'start' });
      card?.querySelector<HTMLElement>('input, button')?.focus({ preventScroll: true });
    });
  }, []);
  return (
    <div className={`workbench show-${view}`}>
      <div className="view-switch" role="tablist" aria-label="Show">
        {(['policy', 'simulator'] as const).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => setView(v)}>
            {v === 'policy' ? 'Policy' : 'Simulator'}
          </button>
        ))}
      </div>
      <PolicyEditor
        tenant={tenant}
        draft={draft}
        toolIds={toolIds}
        groupNames={(groups.data ?? []).map((g) => g.name)}
        editable={canEditTenant(session, tenant)}
      />
      <aside className="workbench-side">
        <TestResults tenant={tenant} unsavedPolicy={draft.dirty ? draft.value : undefined} policyVersion={server.version} />
        <Simulator
          tenant={tenant}
          policy={draft.value ?? server}
          serverVersion={server.version}
          unsaved={draft.dirty}
          stateNames={(states.data ?? []).map((s) => s.name)}
          saveFormId={canEditTenant(session, tenant) ? policyFormId(tenant) : undefined}
          tools={toolsById}
          onShowRole={showRole}
          canSaveTest={canEditTenant(session, tenant)}
        />
      </aside>
    </div>
  );
}
