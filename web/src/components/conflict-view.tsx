import { useEffect, useRef } from 'react';
import { DiffView } from './diff-view.tsx';
import type { Draft } from '../lib/use-draft.ts';

/**
 * Shown when a save is answered 412: what others changed since this edit started, what this edit
 * changes, and the choice to re-apply this edit onto the latest version or drop it.
 */
export function ConflictView({
  base,
  current,
  mine,
  onReapply,
  onDiscard,
  busy,
}: {
  base: unknown;
  current: unknown;
  mine: unknown;
  onReapply: () => void;
  onDiscard: () => void;
  busy?: boolean;
}) {
  const strip = (v: unknown) => {
    if (!v || typeof v !== 'object') return v;
    const { version: _v, updatedAt: _u, createdAt: _c, ...rest } = v as Record<string, unknown>;
    return rest;
  };
  const cv = (current as { version?: number } | null)?.version;
  const ref = useRef<HTMLElement>(null);
  // Bring the conflict to the user's attention and keyboard focus: the save button may be far below it.
  useEffect(() => {
    ref.current?.scrollIntoView({ block: 'start' });
    ref.current?.focus();
  }, []);
  return (
    <section ref={ref} tabIndex={-1} className="conflict" role="alertdialog" aria-labelledby="conflict-title" aria-describedby="conflict-desc">
      <h2 id="conflict-title">Someone else saved this first</h2>
      <p id="conflict-desc">
        It is now at version {cv ?? '?'}. Your changes were not saved. Review what changed meanwhile, then re-apply your changes on top of the latest version or
        discard them.
      </p>
      <div className="conflict-grid">
        <div>
          <h3>Changed meanwhile</h3>
          <DiffView before={strip(base)} after={strip(current)} label="Changed meanwhile" />
        </div>
        <div>
          <h3>Your changes</h3>
          <DiffView before={strip(base)} after={strip(mine)} label="Your changes" />
        </div>
      </div>
      <div className="button-row">
        <button type="button" className="primary" onClick={onReapply} disabled={busy}>
          Re-apply my changes
        </button>
        <button type="button" onClick={onDiscard} disabled={busy}>
          Discard mine and load the latest
        </button>
      </div>
    </section>
  );
}

/**
 * The conflict of a `useDraft` edit, when there is one: re-apply merges this edit onto the latest
 * version and submits it; discard drops the draft, then calls `onDiscard` with the latest version.
 */
export function DraftConflict<T extends { version?: number }>({
  draft,
  submit,
  onDiscard,
  busy,
}: {
  draft: Draft<T>;
  submit: (merged: T) => void;
  onDiscard?: (current: T) => void;
  busy?: boolean;
}) {
  const conflict = draft.conflict;
  if (!conflict) return null;
  return (
    <ConflictView
      {...conflict}
      busy={busy}
      onReapply={() => {
        const merged = draft.reapplied();
        if (!merged) return;
        draft.acceptReapplied(merged);
        submit(merged);
      }}
      onDiscard={() => {
        draft.reset();
        onDiscard?.(conflict.current);
      }}
    />
  );
}
