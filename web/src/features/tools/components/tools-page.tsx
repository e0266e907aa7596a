import { useDeferredValue, useEffect, useEffectEvent, useId, useState } from 'react';
import type { Tool, ToolQuery } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import type { Session } from '../../auth/api/get-session.ts';
import { useGroups } from '../../groups/api/get-groups.ts';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import { useDebounced } from '../../../lib/use-debounced.ts';
import { useUrlFilters } from '../../../lib/use-url-filters.ts';
import { effects, sourceKinds, toolStatuses } from '../../../lib/schema.ts';
import { getAllMatching, useToolPage, type ToolFilters } from '../api/get-tools.ts';
import { useBulkDisable, useBulkGroup, useBulkRedaction, type BulkResult } from '../api/patch-tool.ts';
import { mcpName } from '../mcp-name.ts';
import { ProviderBadges } from './provider-note.tsx';
import { ToolBadges } from './tool-badges.tsx';
import { matchesSearch, SEARCH_PAUSE_MS } from '../search.ts';

const filterKeys = ['q', 'group', 'effect', 'status', 'source', 'redaction', 'sort', 'order'] as const;
const PAGE_SIZE = 50;

type SortKey = NonNullable<ToolQuery['sort']>;

/**
 * The inventory, a page at a time: search (debounced), filters and sorting answered by the server
 * and kept in the URL; a bulk bar that stays in view while tools are selected across pages.
 */
export function ToolsPage({ session }: { session: Session }) {
  const { filters, setFilter, setFilters } = useUrlFilters<ToolFilters>('/tools', filterKeys);
  const [q, setQ] = useState(filters.q ?? '');
  const settledQ = useDebounced(q, SEARCH_PAUSE_MS);
  // Only the settled search text goes to the URL (and so to the server). It goes when it settles,
  // against the route as it is then: a change of the route alone does not send it again.
  const putQ = useEffectEvent((text: string) => {
    if ((filters.q ?? '') !== text) setFilter('q', text);
  });
  useEffect(() => {
    putQ(settledQ);
  }, [settledQ]);
  const filterKey = JSON.stringify(filters);
  // Cursors of the pages before the current one; a change of filters starts again at page 1.
  const [pages, setPages] = useState<{ key: string; cursors: (string | undefined)[] }>({ key: filterKey, cursors: [undefined] });
  const cursors = pages.key === filterKey ? pages.cursors : [undefined];
  const cursor = cursors[cursors.length - 1];
  const tools = useToolPage(filters, PAGE_SIZE, cursor);
  const groups = useGroups();
  const editable = canEditInventory(session);
  const [selected, setSelected] = useState<Map<string, Tool>>(new Map());
  const [bulkGroupName, setBulkGroupName] = useState('');
  const [bulkReason, setBulkReason] = useState('');
  const [bulkResult, setBulkResult] = useState<{ op: 'add' | 'remove'; group: string; result: BulkResult } | null>(null);
  const bulk = useBulkGroup();
  const redact = useBulkRedaction();
  const disable = useBulkDisable();
  const [disableResult, setDisableResult] = useState<BulkResult | null>(null);
  const [redactionText, setRedactionText] = useState('');
  const [redactResult, setRedactResult] = useState<BulkResult | null>(null);
  const [selectingAll, setSelectingAll] = useState<unknown>(null);
  const ids = useId();

  const answered = tools.data?.items ?? [];
  // The rows shown follow the text as it is typed: the page answered for an earlier text is
  // narrowed at once, by the server's own rule, until the server answers for this one.
  const typed = useDeferredValue(q);
  const items = typed ? answered.filter((t) => matchesSearch(t, typed)) : answered;
  const narrowedHere = items.length < answered.length;
  const sort = { key: (filters.sort ?? 'id') as SortKey, dir: filters.order === 'desc' ? -1 : 1 };
  const sortHeader = (key: SortKey, label: string, className?: string) => (
    <th scope="col" className={className} aria-sort={sort.key === key ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        className="sort-button"
        onClick={() => {
          const desc = sort.key === key && sort.dir === 1;
          setFilters({ sort: key === 'id' ? '' : key, order: desc ? 'desc' : '' });
        }}
      >
        {label}
        <span aria-hidden="true">{sort.key === key ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}</span>
      </button>
    </th>
  );
  const selectedTools = [...selected.values()];
  const pageSelected = items.length > 0 && items.every((t) => selected.has(t.id));
  const first = (cursors.length - 1) * PAGE_SIZE + 1;

  const runRedaction = () => {
    if (!selectedTools.length) return;
    setRedactResult(null);
    const allow = redactionText
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    redact.mutate(
      { tools: selectedTools, allow, reason: bulkReason },
      {
        onSuccess: (result) => {
          setRedactResult(result);
          setSelected(new Map(result.tools.map((t) => [t.id, t])));
        },
      },
    );
  };
  const runDisable = () => {
    if (!selectedTools.length) return;
    setDisableResult(null);
    disable.mutate(
      { tools: selectedTools, reason: bulkReason },
      {
        onSuccess: (result) => {
          setDisableResult(result);
          setSelected(new Map(result.tools.map((t) => [t.id, t])));
        },
      },
    );
  };
  const selectAllMatching = () => {
    setSelectingAll(true);
    getAllMatching(filters).then(
      (all) => {
        setSelected(new Map([...selected, ...all.map((t) => [t.id, t] as const)]));
        setSelectingAll(null);
      },
      (err) => setSelectingAll(err instanceof Error ? err : new Error(String(err))),
    );
  };

  const runBulk = (op: 'add' | 'remove') => {
    if (!bulkGroupName || !selectedTools.length) return;
    setBulkResult(null);
    bulk.mutate(
      { tools: selectedTools, group: bulkGroupName, op, reason: bulkReason },
      {
        onSuccess: (result) => {
          setBulkResult({ op, group: bulkGroupName, result });
          // The selection stays, at the versions just written, so a second change needs no reload.
          setSelected(new Map(result.tools.map((t) => [t.id, t])));
        },
      },
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
      <search className="filters" aria-label="Filter tools">
        <div className="field">
          <label htmlFor={`${ids}-q`}>Search</label>
          <input id={`${ids}-q`} type="search" value={q} placeholder="id or description" onChange={(e) => setQ(e.target.value)} />
        </div>
        <SelectField empty="Any" label="Group" value={filters.group} options={(groups.data ?? []).map((g) => g.name)} onChange={(v) => setFilter('group', v)} />
        <SelectField empty="Any" label="Effect" value={filters.effect} options={effects} onChange={(v) => setFilter('effect', v)} />
        <SelectField empty="Any" label="Status" value={filters.status} options={toolStatuses} onChange={(v) => setFilter('status', v)} />
        <SelectField empty="Any" label="Source" value={filters.source} options={sourceKinds} onChange={(v) => setFilter('source', v)} />
        <SelectField empty="Any" label="Redaction" value={filters.redaction} options={['none', 'set']} onChange={(v) => setFilter('redaction', v)} />
      </search>

      {editable && (selectedTools.length || bulkResult) ? (
        <fieldset className="bulk-bar sticky" aria-label="Bulk actions">
          <span>{selectedTools.length} selected</span>
          <label htmlFor={`${ids}-bulk-group`}>Group</label>
          <select id={`${ids}-bulk-group`} value={bulkGroupName} onChange={(e) => setBulkGroupName(e.target.value)}>
            <option value="">Choose a group…</option>
            {(groups.data ?? []).map((g) => (
              <option key={g.name}>{g.name}</option>
            ))}
          </select>
          <label htmlFor={`${ids}-bulk-reason`}>Reason</label>
          <input id={`${ids}-bulk-reason`} value={bulkReason} placeholder="kept in the audit log" onChange={(e) => setBulkReason(e.target.value)} />
          <button type="button" disabled={!selectedTools.length || !bulkGroupName || bulk.isPending} onClick={() => runBulk('add')}>
            Add to group
          </button>
          <button type="button" disabled={!selectedTools.length || !bulkGroupName || bulk.isPending} onClick={() => runBulk('remove')}>
            Remove from group
          </button>
          {selectedTools.length ? (
            <button type="button" className="link-button" onClick={() => setSelected(new Map())}>
              Clear selection
            </button>
          ) : null}
          <span className="bulk-break" />
          <label htmlFor={`${ids}-bulk-redaction`}>Output fields kept</label>
          <input
            id={`${ids}-bulk-redaction`}
            value={redactionText}
            placeholder="title, items[].id (empty keeps none)"
            onChange={(e) => setRedactionText(e.target.value)}
          />
          <button type="button" disabled={!selectedTools.length || redact.isPending} onClick={runRedaction}>
            Set redaction allowlist
          </button>
          <button type="button" className="danger" disabled={!selectedTools.length || disable.isPending} onClick={runDisable}>
            Disable selected
          </button>
          {disableResult ? (
            disableResult.failed.length ? (
              <BulkFailures result={disableResult} />
            ) : (
              <Notice success={`Disabled ${disableResult.ok.length} tool(s): they leave every bundle until enabled again.`} />
            )
          ) : (
            <Notice error={disable.error} />
          )}
          {redactResult ? (
            redactResult.failed.length ? (
              <BulkFailures result={redactResult} />
            ) : (
              <Notice success={`Set the redaction allowlist of ${redactResult.ok.length} tool(s).`} />
            )
          ) : (
            <Notice error={redact.error} />
          )}
          {bulkResult ? (
            bulkResult.result.failed.length ? (
              <BulkFailures result={bulkResult.result} />
            ) : (
              <Notice
                success={`${bulkResult.op === 'add' ? 'Added' : 'Removed'} ${bulkResult.result.ok.length} tool(s) ${bulkResult.op === 'add' ? 'to' : 'from'} ${bulkResult.group}.`}
              />
            )
          ) : (
            <Notice error={bulk.error} />
          )}
        </fieldset>
      ) : null}

      {tools.isPending ? <Loading what="tools" /> : null}
      {tools.error ? <Notice error={tools.error} /> : null}
      {tools.data ? (
        <div className="table-wrap">
          <table className="data-table tools-table" aria-label="Tools" aria-busy={tools.isFetching}>
            <thead>
              <tr>
                {editable ? (
                  <th scope="col" className="col-check">
                    <input
                      type="checkbox"
                      aria-label="Select all tools on this page"
                      checked={pageSelected}
                      onChange={() => {
                        const next = new Map(selected);
                        for (const t of items)
                          if (pageSelected) next.delete(t.id);
                          else next.set(t.id, t);
                        setSelected(next);
                      }}
                    />
                  </th>
                ) : null}
                {sortHeader('id', 'Tool')}
                {sortHeader('status', 'Status')}
                {sortHeader('effect', 'Effect', 'col-optional')}
                <th scope="col" className="col-optional">
                  Groups
                </th>
                {sortHeader('source', 'Source', 'col-optional')}
                <th scope="col" className="col-optional">
                  Model providers
                </th>
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
                    const next = new Map(selected);
                    if (next.has(t.id)) next.delete(t.id);
                    else next.set(t.id, t);
                    setSelected(next);
                  }}
                />
              ))}
            </tbody>
          </table>
          {items.length === 0 && !narrowedHere ? <p className="muted">No tool matches these filters.</p> : null}
          {editable && pageSelected && tools.data.total > items.length ? (
            <p className="notice notice-info">
              All {items.length} tools on this page are selected.{' '}
              <button type="button" className="link-button" disabled={selectingAll === true} onClick={selectAllMatching}>
                {selectingAll === true ? 'Selecting…' : `Select all ${tools.data.total} tools that match these filters`}
              </button>
            </p>
          ) : null}
          {selectingAll instanceof Error ? <Notice error={selectingAll} /> : null}
          <div className="pager">
            <p className="muted table-count" role="status">
              {narrowedHere
                ? `${items.length} of the ${answered.length} shown match; searching every tool…`
                : items.length
                  ? `${first}–${first + items.length - 1} of ${tools.data.total} tool(s)`
                  : `${tools.data.total} tool(s)`}
              {tools.data.counts.quarantined ? ` · ${tools.data.counts.quarantined} quarantined` : ''}
              {tools.data.counts.noRedaction ? ` · ${tools.data.counts.noRedaction} without redaction (kept out of bundles)` : ''}
            </p>
            <div className="button-row">
              <button type="button" disabled={cursors.length < 2} onClick={() => setPages({ key: filterKey, cursors: cursors.slice(0, -1) })}>
                Previous page
              </button>
              <button
                type="button"
                disabled={!tools.data.nextCursor || tools.isPlaceholderData}
                onClick={() => setPages({ key: filterKey, cursors: [...cursors, tools.data!.nextCursor!] })}
              >
                Next page
              </button>
            </div>
          </div>
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
      <td className="col-id">
        <a href={href(`/tools/${encodeURIComponent(tool.id)}`)} className="mono">
          {tool.id}
        </a>
        {mcpName(tool) !== null ? (
          <div className="muted">
            named <code>{mcpName(tool)}</code> on its MCP server
          </div>
        ) : null}
        <div className="muted clamp">{tool.description}</div>
      </td>
      <td>
        <ToolBadges tool={tool} />
      </td>
      <td className="col-optional">
        <span className={`effect effect-${tool.effect}`}>{tool.effect.replace(/_/g, ' ')}</span>
      </td>
      <td className="col-optional">
        <span className="chips">
          {(tool.groups ?? ['default']).map((g) => (
            <a key={g} className="chip" href={href(`/tools?group=${encodeURIComponent(g)}`)}>
              {g}
            </a>
          ))}
        </span>
      </td>
      <td className="col-optional">{tool.source?.kind === 'mcp' ? `mcp: ${tool.source.server ?? ''}` : (tool.source?.kind ?? 'core')}</td>
      <td className="col-optional">
        <ProviderBadges inputSchema={tool.inputSchema} />
      </td>
    </tr>
  );
}

/** Which tools a bulk change could not change, each with the server's answer. */
function BulkFailures({ result }: { result: BulkResult }) {
  return (
    <div role="alert" className="notice notice-error">
      {result.ok.length} changed, {result.failed.length} not:
      <ul>
        {result.failed.map((f) => (
          <li key={f.id}>
            <code>{f.id}</code>: {f.error instanceof Error ? f.error.message : String(f.error)}
          </li>
        ))}
      </ul>
    </div>
  );
}
