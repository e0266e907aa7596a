import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

const MAX_REMEMBERED = 1024;

/**
 * Hono's default router (the first of RegExpRouter and TrieRouter that takes every route) with the
 * last matches remembered by method and path. Some of our routes put a fixed segment and a parameter
 * side by side (`/v1/keys/rotate`, `/v1/keys/:kid/promote`), which RegExpRouter refuses, so the trie
 * answers, and walking it was 40% of a bundle pull's handling. A match depends on nothing but the
 * method and the path, and Hono only reads what match() returns, so a remembered one is the same
 * answer. At most MAX_REMEMBERED paths are kept (then it starts over): paths carry tenant and tool ids.
 */
export class MemoRouter<T> implements Router<T> {
  name = 'MemoRouter';
  private readonly router = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  private readonly remembered = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.remembered.clear();
    this.router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.remembered.get(key);
    if (result === undefined) {
      result = this.router.match(method, path);
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
      this.remembered.set(key, result);
    }
    return result;
  }
}
