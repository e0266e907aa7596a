import { resolve } from 'node:path';
import type { AppDeps } from './context.ts';
import { KeyStore } from './signing/key-store.ts';

/** What a server keeps in memory between requests, beside its database: the parts of AppDeps made here. */
export type ServerState = Pick<AppDeps, 'keys'>;

/**
 * Makes a server's in-memory state, once per server (openToolgate; the test harnesses that build
 * an app by hand): each server gets its own, so two servers in one process share none of it.
 */
export function createServerState(base: Pick<AppDeps, 'config'>): ServerState {
  return {
    keys: new KeyStore(resolve(base.config.keysDir)),
  };
}
