import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

// `toolgate serve` as a real process, for tests that need the listener an operator runs: one
// environment block, one wait for /healthz, one way to kill the whole process group.

export type ServeEnvOptions = {
  port: number;
  /** Holds the database (unless `db` is given), the keys and an empty web directory. */
  dir: string;
  adminToken: string;
  /** `TOOLGATE_DB`: a PostgreSQL URL, or a SQLite path (default `<dir>/toolgate.db`). */
  db?: string;
  /** `TOOLGATE_KEYS_DIR` (default `<dir>/keys`), e.g. one shared by replicas. */
  keysDir?: string;
  seed?: 'demo' | 'none';
  logLevel?: string;
  /** Further variables, e.g. `TOOLGATE_METRICS_PUBLIC` or `NODE_OPTIONS`. */
  extra?: Record<string, string>;
};

export function serveEnv(o: ServeEnvOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(o.port),
    TOOLGATE_DB: o.db ?? join(o.dir, 'toolgate.db'),
    TOOLGATE_KEYS_DIR: o.keysDir ?? join(o.dir, 'keys'),
    TOOLGATE_WEB_DIR: join(o.dir, 'no-web'),
    ...(o.seed ? { TOOLGATE_SEED: o.seed } : {}),
    TOOLGATE_ADMIN_TOKEN: o.adminToken,
    LOG_LEVEL: o.logLevel ?? 'silent',
    ...o.extra,
  };
}

/** Resolves once `url`/healthz answers 200; throws with `what` if the child exits first or the time runs out. */
export async function waitUntilHealthy(url: string, child: ChildProcess, timeoutMs: number, what = 'toolgate serve'): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before answering /healthz`);
    if (Date.now() > end) throw new Error(`${what} did not answer /healthz within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Signals the child's whole process group (it was spawned `detached`); nothing if it is gone. */
export function killProcessGroup(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
