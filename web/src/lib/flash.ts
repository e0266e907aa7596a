import { useSyncExternalStore } from 'react';

/** A success message that outlives the page that made it: shown on the next page, then gone. */
type FlashMessage = { text: string; path: string | null };

let message: FlashMessage | null = null;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

/** Shows `text` on the page at `path` (the one about to be opened), e.g. "Created core__x." after a create. */
export function flash(text: string, path: string | null = null): void {
  message = { text, path };
  emit();
}

/** Drops the message once the person has moved on from the page it was shown on. */
export function clearFlash(currentPath: string): void {
  if (message && message.path !== null && message.path !== currentPath) {
    message = null;
    emit();
  }
}

export function useFlash(): FlashMessage | null {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => message,
  );
}
