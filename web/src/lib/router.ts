import { useEffect, useSyncExternalStore } from 'react';

/** The current route: the path after `#`, split from its query. */
export type Location = { path: string; segments: string[]; params: URLSearchParams };

type Blocker = () => boolean;
const blockers = new Set<Blocker>();
let lastHash = window.location.hash;

function parse(hash: string): Location {
  const raw = hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = raw.split('?');
  return { path, segments: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(search) };
}

let current = parse(window.location.hash);
const listeners = new Set<() => void>();

window.addEventListener('hashchange', () => {
  const next = window.location.hash;
  if (next === lastHash) return;
  const skip = skipBlockersOnce;
  skipBlockersOnce = false;
  if (!skip)
    for (const blocked of blockers) {
      if (blocked() && !window.confirm('You have unsaved changes. Leave this page and discard them?')) {
        window.history.replaceState(null, '', lastHash || '#/');
        return;
      }
    }
  lastHash = next;
  current = parse(next);
  for (const l of listeners) l();
});

/** The current hash route, read once (no re-render on change). */
export function currentLocation(): Location {
  return current;
}

/** The current hash route, re-rendering on change. */
export function useLocation(): Location {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => current,
  );
}

let skipBlockersOnce = false;

/** Navigates to an in-app path such as `/tools/core__x`; `force` skips the unsaved-changes prompt (after a save). */
export function navigate(path: string, { force = false } = {}): void {
  const hash = `#${path}`;
  if (window.location.hash === hash) return;
  skipBlockersOnce = force;
  window.location.hash = hash;
}

/** Replaces the current route without a history entry (filters in the URL). */
export function replaceRoute(path: string): void {
  const hash = `#${path}`;
  window.history.replaceState(null, '', hash);
  lastHash = hash;
  current = parse(hash);
  for (const l of listeners) l();
}

/** The href of an in-app path. */
export function href(path: string): string {
  return `#${path}`;
}

/** Asks before leaving the page (in-app navigation, reload, closing the tab) while `dirty` holds. */
export function useUnsavedChangesPrompt(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return;
    const blocker: Blocker = () => true;
    blockers.add(blocker);
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      blockers.delete(blocker);
      window.removeEventListener('beforeunload', onBeforeUnload);
    };
  }, [dirty]);
}
