import { getRequestListener } from '@hono/node-server';
import { type Server, createServer } from 'node:http';
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../context.ts';
import { conditionalPulls } from '../distribution/conditional-pull.ts';

/**
 * The Node HTTP server of an app: conditional bundle pulls the listener can answer from memory
 * are answered there; everything else goes to the app through @hono/node-server. Not listening yet.
 */
export function createToolgateServer(app: Hono<AppEnv>, deps: AppDeps, opts: { hostname?: string } = {}): Server {
  const viaApp = getRequestListener(app.fetch, { hostname: opts.hostname });
  const shortcut = conditionalPulls(deps);
  let faultLogged = false;
  return createServer((incoming, outgoing) => {
    let answered: boolean;
    try {
      answered = shortcut(incoming, outgoing);
    } catch (err) {
      // A fault in the shortcut costs the request its speed, never its answer: counted on each
      // request (a recurring one turns the shortcut off), said in the log once, not per request.
      deps.metrics.listenerPullFaults.inc();
      if (!faultLogged) {
        faultLogged = true;
        deps.logger.error({ err }, 'the conditional-pull shortcut failed; such requests go to the app');
      }
      answered = outgoing.headersSent;
    }
    if (!answered) void viaApp(incoming, outgoing);
  });
}
