import type { State, Tool } from '../../../../../policy-schemas/types.gen.ts';

export const ANY = '*';
type Edge = { from: string; to: string; tools: string[] };

/** Transitions the tools define: from each state a tool is available in, to the tool's `state`. */
export function transitions(tools: Tool[]): Edge[] {
  const byKey = new Map<string, Edge>();
  for (const t of tools) {
    if (!t.state || t.status === 'removed') continue;
    const from = !t.availableInStates || t.availableInStates.includes('*') ? [ANY] : t.availableInStates;
    for (const f of from) {
      const key = `${f}\u0000${t.state}`;
      const e = byKey.get(key) ?? { from: f, to: t.state, tools: [] };
      e.tools.push(t.id);
      byKey.set(key, e);
    }
  }
  return [...byKey.values()];
}

/** Left-to-right layers by distance from `undefined`, the initial state. */
function layout(states: string[], edges: Edge[]) {
  const layer = new Map<string, number>([['undefined', 0]]);
  const queue = ['undefined'];
  while (queue.length) {
    const s = queue.shift()!;
    for (const e of edges) {
      if ((e.from === s || e.from === ANY) && !layer.has(e.to)) {
        layer.set(e.to, (layer.get(s) ?? 0) + 1);
        queue.push(e.to);
      }
    }
  }
  const maxLayer = Math.max(0, ...layer.values());
  for (const s of states) if (!layer.has(s)) layer.set(s, maxLayer + 1);
  const columns = new Map<number, string[]>();
  for (const s of states) columns.set(layer.get(s)!, [...(columns.get(layer.get(s)!) ?? []), s]);
  const pos = new Map<string, { x: number; y: number }>();
  const colW = 220;
  const rowH = 110;
  const top = 130;
  // Alternate columns are shifted down so that arrows skipping a column do not run through its boxes.
  for (const [l, names] of columns) names.forEach((n, i) => pos.set(n, { x: 90 + l * colW, y: top + i * rowH + (l % 2) * 44 }));
  const width = 90 + (Math.max(0, ...columns.keys()) + 1) * colW;
  const height = top + 60 + Math.max(1, ...[...columns.values()].map((c) => c.length)) * rowH;
  return { pos, width, height };
}

const NODE_W = 118;
const NODE_H = 36;

/** The state machine drawn as SVG: boxes for states, arrows labelled with the tools that move between them. */
export function StateGraph({ states, tools }: { states: State[]; tools: Tool[] }) {
  const names = states.map((s) => s.name);
  const edges = transitions(tools).filter((e) => (e.from === ANY || names.includes(e.from)) && names.includes(e.to));
  const { pos, width, height } = layout(names, edges);
  const hasAny = edges.some((e) => e.from === ANY);
  const anyPos = { x: 90, y: 40 };
  const at = (n: string) => (n === ANY ? anyPos : pos.get(n)!);
  const description = edges.map((e) => `${e.from === ANY ? 'any state' : e.from} to ${e.to} via ${e.tools.join(', ')}`).join('; ');
  return (
    <figure className="state-graph">
      <svg
        viewBox={`0 0 ${Math.max(width, 400)} ${height}`}
        width="100%"
        style={{ maxWidth: Math.max(width, 400) * 1.1 }}
        role="img"
        aria-labelledby="state-graph-title state-graph-desc"
        preserveAspectRatio="xMinYMin meet"
      >
        <title id="state-graph-title">State transitions defined by the tools</title>
        <desc id="state-graph-desc">{description || 'No tool moves between states.'}</desc>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="arrow-head" />
          </marker>
        </defs>
        {edges.map((e) => {
          const a = at(e.from);
          const b = at(e.to);
          const label = e.tools.length === 1 ? e.tools[0]!.replace(/^core__/, '') : `${e.tools.length} tools`;
          if (e.from === e.to) {
            const d = `M ${a.x - 20} ${a.y - NODE_H / 2} C ${a.x - 40} ${a.y - 80}, ${a.x + 40} ${a.y - 80}, ${a.x + 20} ${a.y - NODE_H / 2}`;
            return (
              <g key={`${e.from}-${e.to}`} className="edge">
                <title>{e.tools.join('\n')}</title>
                <path d={d} markerEnd="url(#arrow)" />
                <text x={a.x} y={a.y - 66} textAnchor="middle">
                  {label}
                </text>
              </g>
            );
          }
          const dx = b.x - a.x;
          const dy = b.y - a.y;
          const len = Math.hypot(dx, dy) || 1;
          // Start and end on the box borders; bend sideways so A→B and B→A do not overlap.
          const clip = (p: { x: number; y: number }, dir: number) => {
            const tx = Math.abs(dx) > 0 ? NODE_W / 2 / Math.abs(dx / len) : Infinity;
            const ty = Math.abs(dy) > 0 ? NODE_H / 2 / Math.abs(dy / len) : Infinity;
            const t = Math.min(tx, ty) + 4;
            return { x: p.x + (dir * dx * t) / len, y: p.y + (dir * dy * t) / len };
          };
          const s = clip(a, 1);
          const t = clip(b, -1);
          const bend = 22 + len * 0.16;
          const mx = (s.x + t.x) / 2 - (dy / len) * bend;
          const my = (s.y + t.y) / 2 + (dx / len) * bend;
          return (
            <g key={`${e.from}-${e.to}`} className={`edge${e.from === ANY ? ' edge-any' : ''}`}>
              <title>{e.tools.join('\n')}</title>
              <path d={`M ${s.x} ${s.y} Q ${mx} ${my} ${t.x} ${t.y}`} markerEnd="url(#arrow)" />
              <text x={(s.x + 2 * mx + t.x) / 4} y={(s.y + 2 * my + t.y) / 4 - 4} textAnchor="middle">
                {label}
              </text>
            </g>
          );
        })}
        {hasAny ? (
          <g className="node node-any">
            <rect x={anyPos.x - NODE_W / 2} y={anyPos.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={18} />
            <text x={anyPos.x} y={anyPos.y + 4} textAnchor="middle">
              any state
            </text>
          </g>
        ) : null}
        {names.map((n) => {
          const p = pos.get(n)!;
          return (
            <g key={n} className={`node${n === 'undefined' ? ' node-initial' : ''}`}>
              <rect x={p.x - NODE_W / 2} y={p.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={6} />
              <text x={p.x} y={p.y + 4} textAnchor="middle">
                {n}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        Arrows run from the states a tool is available in to the state it moves to after a successful call. Hover an arrow for its tools; the initial state is{' '}
        <code>undefined</code>.
      </figcaption>
    </figure>
  );
}
