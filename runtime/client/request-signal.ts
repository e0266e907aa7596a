/** A signal for one request, and the call that lets go of it once the request (body included) is over. */
export type RequestSignal = { readonly signal: AbortSignal; done(): void };

/**
 * A signal that aborts when `parent` does or after `timeoutMs`, and that `parent` forgets once the
 * request is over. `AbortSignal.any([parent, AbortSignal.timeout(ms)])` did the same, but Node 20
 * keeps a reference in `parent` to every signal ever made from it: a client's long-lived close
 * signal (or a host's shutdown signal passed to every approval wait) grew by one per request.
 */
export function requestSignal(parent: AbortSignal | undefined, timeoutMs: number): RequestSignal {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), timeoutMs);
  timer.unref?.();
  if (parent?.aborted) onAbort();
  else parent?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}
