import { useState } from 'react';
import { ApiError } from './api-client.ts';
import { applyMergePatch, createMergePatch, jsonEqual } from './json.ts';
import { useUnsavedChangesPrompt } from './router.ts';

export type Conflict<T> = { base: T; current: T; mine: T };

/** What `useDraft` returns, for components that take a draft as a prop. */
export type Draft<T extends { version?: number }> = ReturnType<typeof useDraft<T>>;

/**
 * Local edits of a server entity: the draft, whether it differs, the unsaved-changes prompt, and the
 * 412 conflict (re-apply = this edit's merge patch applied onto the server's current entity).
 */
export function useDraft<T extends { version?: number }>(server: T | undefined) {
  const [draft, setDraftState] = useState<{ base: T; value: T } | null>(null);
  const [conflict, setConflict] = useState<Conflict<T> | null>(null);
  const value = draft?.value ?? server;
  const dirty = !!draft && !jsonEqual(draft.value, draft.base);
  useUnsavedChangesPrompt(dirty);

  const update = (fn: (v: T) => T) => {
    if (!value) return;
    setDraftState({ base: draft?.base ?? (server as T), value: fn(value) });
  };
  const reset = () => {
    setDraftState(null);
    setConflict(null);
  };
  /** Inspects a failed save; returns true when it was a conflict now shown. */
  const onSaveError = (err: unknown): boolean => {
    if (err instanceof ApiError && err.status === 412 && err.current && draft) {
      setConflict({ base: draft.base, current: err.current as T, mine: draft.value });
      return true;
    }
    return false;
  };
  /** The value to save when re-applying after a conflict: this edit merged onto the current entity. */
  const reapplied = (): T | null => {
    if (!conflict) return null;
    const patch = createMergePatch(strip(conflict.base), strip(conflict.mine));
    const merged = applyMergePatch(conflict.current, patch);
    return { ...merged, version: conflict.current.version };
  };
  const acceptReapplied = (merged: T) => {
    setDraftState({ base: conflict?.current ?? merged, value: merged });
    setConflict(null);
  };
  return { value, dirty, update, reset, conflict, onSaveError, reapplied, acceptReapplied, setConflict };
}

function strip<T>(v: T): T {
  if (!v || typeof v !== 'object') return v;
  const { version: _v, updatedAt: _u, createdAt: _c, ...rest } = v as Record<string, unknown>;
  return rest as T;
}
