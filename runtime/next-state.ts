import type { LoadedBundle } from './load-bundle.ts';

/** The workflow state after a successful call of `toolId`: the tool's `state`, else unchanged. */
export function nextState(loaded: LoadedBundle, state: string | undefined, toolId: string): string {
  return loaded.byId.get(toolId)?.def?.state ?? state ?? 'undefined';
}
