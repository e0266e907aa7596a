import { useDeferredValue, useId, useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import type { Session } from '../../auth/api/get-session.ts';
import { useGroups } from '../../groups/api/get-groups.ts';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import { useUrlFilters } from '../../../lib/use-url-filters.ts';
import { effects, sourceKinds, toolStatuses } from '../../../lib/schema.ts';
import { useTools, type ToolFilters } from '../api/get-tools.ts';
import { useBulkGroup, type BulkResult } from '../api/patch-tool.ts';
import { ToolBadges } from './tool-badges.tsx';

const filterKeys = ['q', 'group', 'effect', 'status', 'source'] as const;

type SortKey = 'id' | 'effect' | 'status' | 'source';

function sortValue(t: Tool, key: SortKey): string {
  if (key === 'status') return t.status ?? 'active';
  if (key === 'source') return `${t.source?.kind ?? 'core'}:${t.source?.server ?? ''}`;
  return key === 'effect' ? `${t.effect}:${t.id}` : t.id;
}

/** The inventory: search and filters (kept in the URL), status badges, bulk group changes. */
export function ToolsPage({ session }: { session: Session }) {
  const { filters, setFilter } = useUrlFilters<ToolFilters>('/tools', filterKeys);
  const [q, setQ] = useState(filters.q ?? '');
  const deferredQ = useDeferredValue(q);
  const effective = { ...filters, q: deferredQ || undefined };
  const tools = useTools(effective);
  const groups = useGroups();
  const editable = canEditInventory(session);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulkGroupName, setBulkGroupName] = useState('');
  const [bulkResult, setBulkResult] = useState<{ op: 'add' | 'remove'; group: string; result: BulkResult } | null>(null);
  const bulk = useBulkGroup();
  const ids = useId();

  const [sort, setSort] = useState<{ key: SortKey; dir: 1 | -1 }>({ key: 'id', dir: 1 });
  const items = [...(tools.data ?? [])].sort((a, b) => sort.dir * sortValue(a, sort.key).localeCompare(sortValue(b, sort.key)));
  const quarantined = items.filter((t) => t.status === 'quarantined').length;
  const unredacted = items.filter((t) => !t.redaction).length;
  const sortHeader = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={sort.key === key ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="sort-button" onClick={() => setSort({ key, dir: sort.key === key ? (-sort.dir as 1 | -1) : 1 })}>
        {label}
        <span aria-hidden="true">{sort.key === key ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}</span>
      </button>
    </th>
  );
  const selectedTools = items.filter((t) => selected.has(t.id));
  const allSelected = items.length > 0 && items.every((t) => selected.has(t.id));

  const runBulk = (op: 'add' | 'remove') => {
    if (!bulkGroupName || !selectedTools.length) return;
    setBulkResult(null);
    bulk.mutate(
      { tools: selectedTools, group: bulkGroupName, op },
      { onSuccess: (result) => setBulkResult({ op, group: bulkGroupName, result }) },
    );
  };

  return (
    <section className="page">
      <PageHeader
        title="Tools"
        subtitle="Every tool an agent could be allowed to call."
        actions={
          editable ? (
            <a className="button primary" href={href('/tools/new')}>
              New tool
            </a>
          ) : null
        }
      />
      <form className="filters" role="search" aria-label="Filter tools" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={`${ids}-q`}>Search</label>
          <input
            id={`${ids}-q`}
            type="search"
            value={q}
            placeholder="id or description"
            onChange={(e) => {
              setQ(e.target.value);
              setFilter('q', e.target.value);
            }}
          />
        </div>
        <SelectField empty="Any" label="Group" value={filters.group} options={(groups.data ?? []).map((g) => g.name)} onChange={(v) => setFilter('group', v)} />
        <SelectField empty="Any" label="Effect" value={filters.effect} options={effects} onChange={(v) => setFilter('effect', v)} />
        <SelectField empty="Any" label="Status" value={filters.status} options={toolStatuses} onChange={(v) => setFilter('status', v)} />
        <SelectField empty="Any" label="Source" value={filters.source} options={sourceKinds} onChange={(v) => setFilter('source', v)} />
      </form>

      {editable ? (
        <div className="bulk-bar" role="group" aria-label="Bulk actions">
          <span>{selectedTools.length} selected</span>
          <label htmlFor={`${ids}-bulk-group`}>Group</label>
          <select id={`${ids}-bulk-group`} value={bulkGroupName} onChange={(e) => setBulkGroupName(e.target.value)}>
            <option value="">Choose a group…</option>
            {(groups.data ?? []).map((g) => (
              <option key={g.name}>{g.name}</option>
            ))}
          </select>
          <button type="button" disabled={!selectedTools.length || !bulkGroupName || bulk.isPending} onClick={() => runBulk('add')}>
            Add to group
          </button>
          <button type="button" disabled={!selectedTools.length || !bulkGroupName || bulk.isPending} onClick={() => runBulk('remove')}>
            Remove from group
          </button>
          {bulkResult ? (
            bulkResult.result.failed.length ? (
              <Notice error={bulkResult.result.failed[0]!.error} />
            ) : (
              <Notice success={`${bulkResult.op === 'add' ? 'Added' : 'Removed'} ${bulkResult.result.ok.length} tool(s) ${bulkResult.op === 'add' ? 'to' : 'from'} ${bulkResult.group}.`} />
            )
          ) : (
            <Notice error={bulk.error} />
          )}
        </div>
      ) : null}

      {tools.isPending ? <Loading what="tools" /> : null}
      {tools.error ? <Notice error={tools.error} /> : null}
      {tools.data ? (
        <div className="table-wrap">
          <table className="data-table" aria-label="Tools">
            <thead>
              <tr>
                {editable ? (
                  <th scope="col" className="col-check">
                    <input
                      type="checkbox"
                      aria-label="Select all tools"
                      checked={allSelected}
                      onChange={() => setSelected(allSelected ? new Set() : new Set(items.map((t) => t.id)))}
                    />
                  </th>
                ) : null}
                {sortHeader('id', 'Tool')}
                {sortHeader('effect', 'Effect')}
                <th scope="col">Groups</th>
                {sortHeader('status', 'Status')}
                {sortHeader('source', 'Source')}
              </tr>
            </thead>
            <tbody>
              {items.map((t) => (
                <ToolRow
                  key={t.id}
                  tool={t}
                  editable={editable}
                  checked={selected.has(t.id)}
                  onToggle={() => {
                    const next = new Set(selected);
                    if (next.has(t.id)) next.delete(t.id);
                    else next.add(t.id);
                    setSelected(next);
                  }}
                />
              ))}
            </tbody>
          </table>
          {items.length === 0 ? <p className="muted">No tool matches these filters.</p> : null}
          <p className="muted table-count">
            {items.length} tool(s)
            {quarantined ? ` · ${quarantined} quarantined` : ''}
            {unredacted ? ` · ${unredacted} without redaction (kept out of bundles)` : ''}
          </p>
        </div>
      ) : null}
    </section>
  );
}

function ToolRow({ tool, editable, checked, onToggle }: { tool: Tool; editable: boolean; checked: boolean; onToggle: () => void }) {
  return (
    <tr className={checked ? 'selected' : undefined}>
      {editable ? (
        <td className="col-check">
          <input type="checkbox" aria-label={`Select ${tool.id}`} checked={checked} onChange={onToggle} />
        </td>
      ) : null}
      <td>
        <a href={href(`/tools/${encodeURIComponent(tool.id)}`)} className="mono">
          {tool.id}
        </a>
        <div className="muted clamp">{tool.description}</div>
      </td>
      <td>
        <span className={`effect effect-${tool.effect}`}>{tool.effect.replace(/_/g, ' ')}</span>
      </td>
      <td>
        <span className="chips">
          {(tool.groups ?? ['default']).map((g) => (
            <a key={g} className="chip" href={href(`/tools?group=${encodeURIComponent(g)}`)}>
              {g}
            </a>
          ))}
        </span>
      </td>
      <td>
        <ToolBadges tool={tool} />
      </td>
      <td>{tool.source?.kind === 'mcp' ? `mcp: ${tool.source.server ?? ''}` : (tool.source?.kind ?? 'core')}</td>
    </tr>
  );
}
