import type { Tool } from '../../policy-schemas/types.gen.ts';
import type { DraftSnapshot } from './snapshot.ts';

// A draft snapshot as text, for the compile worker and the snapshot's fingerprint. No database
// module here: the worker imports this.

// The JSON text of a frozen tool list (the inventory's cached one), by the list: it cannot change,
// and a large draft's tools are most of what is written for its fingerprint and its compile.
const toolListTexts = new WeakMap<readonly Tool[], string>();

/** JSON.stringify of a tool list; remembered for a frozen list. */
export function toolListJson(tools: readonly Tool[]): string {
  let text = toolListTexts.get(tools);
  if (text === undefined) {
    text = JSON.stringify(tools) ?? 'null';
    if (Array.isArray(tools) && Object.isFrozen(tools)) toolListTexts.set(tools, text);
  }
  return text;
}

/**
 * A snapshot as text, for another thread (the compile worker): its JSON without the tools, a
 * newline (JSON.stringify writes none), then the tools' JSON (toolListJson: written once per
 * inventory state). SnapshotReader reads it back.
 */
export function snapshotText(snapshot: DraftSnapshot): string {
  const { tools, ...rest } = snapshot;
  return `${JSON.stringify(rest)}\n${toolListJson(tools)}`;
}

/**
 * Reads snapshotText's texts back. While the tools' text is the one read last, the snapshot holds
 * the same frozen list as then, so compileBundle reuses what it worked out from it (a policy edit
 * recompiles the policy only); one reader per receiving thread.
 */
export class SnapshotReader {
  private last: { text: string; tools: readonly Tool[] } | undefined;

  read(text: string): DraftSnapshot {
    const cut = text.indexOf('\n');
    if (cut < 0) throw new TypeError('not a snapshot text: no newline before the tools');
    const rest = JSON.parse(text.slice(0, cut)) as Omit<DraftSnapshot, 'tools'>;
    const toolsText = text.slice(cut + 1);
    if (this.last?.text !== toolsText) this.last = { text: toolsText, tools: Object.freeze(JSON.parse(toolsText) as Tool[]) };
    return { ...rest, tools: this.last.tools as Tool[] };
  }
}
