// A real Toolgate server (createApp on a fresh, demo-seeded database, served on 127.0.0.1:0) and
// Debian's Chromium driven by playwright-core, shared by one e2e test file.
import { serve } from '@hono/node-server';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { createApp } from '../../server/app.ts';
import { openToolgate } from '../../server/startup.ts';
import { CLIENT_ID, CLIENT_SECRET, type TestUser, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { jsonOrUndefined } from '../support/json-or-undefined.ts';

export const ADMIN_TOKEN = 'tg_e2e_admin_token_for_console_tests';
// Screenshots are always taken; they replace the README's (docs/screenshots) only when asked,
// as golden files are, so that a test run leaves the working tree clean.
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? resolve('docs/screenshots') : join(tmpdir(), 'toolgate-e2e-screenshots');
// A benchmark may serve another build of the console (one taken before a change, say).
const WEB_DIR = resolve(process.env.TOOLGATE_E2E_WEB_DIR ?? 'dist/web');

export type Console = Awaited<ReturnType<typeof startConsole>>;

/** Starts the server and the browser; `close()` stops both and removes the temporary database. */
export async function startConsole() {
  if (!existsSync(join(WEB_DIR, 'index.html'))) throw new Error('dist/web is missing: run `npm run build:web` first (npm test does).');
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-e2e-'));
  const { deps } = await openToolgate(
    {
      host: '127.0.0.1',
      port: 0,
      dbFile: join(dir, 'toolgate.db'),
      keysDir: join(dir, 'keys'),
      webDir: WEB_DIR,
      seed: 'demo',
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      // The MCP fixture servers are Node scripts.
      mcpCommands: [process.execPath],
    },
    pino({ level: 'silent' }),
  );
  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  if (!server.listening) await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const browser: Browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });

  /** Calls the API as the bootstrap admin (for setup the test is not about). */
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = jsonOrUndefined(text);
    return { status: res.status, json, text, headers: res.headers };
  };

  /** A fresh browser session (its own cookies), 1280×800 unless told otherwise. */
  const newSession = async (viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ viewport, acceptDownloads: true, baseURL: url });
    const page = await context.newPage();
    return { context, page };
  };

  /** Opens the console and signs in with a token through the login form. */
  const login = async (page: Page, token = ADMIN_TOKEN) => {
    await page.goto(`${url}/`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The navigation may sit behind a menu button on a narrow window; Sign out is always shown.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };

  /** Saves a screenshot for the README; `mask` hides parts that would show this machine's paths. */
  const shot = (page: Page, name: string, mask: Locator[] = []) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false, mask, maskColor: '#e3e7ed' });

  const close = async () => {
    await browser.close().catch(() => undefined);
    await new Promise<void>((r) => server.close(() => r()));
    await deps.compiler.close();
    await deps.database.close();
    rmSync(dir, { recursive: true, force: true });
  };

  return { url, api, browser, newSession, login, shot, close, deps };
}

/** Debian's chromium (never a downloaded browser), quiet: no updates, sync or background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * Starts the test OpenID provider for `users` and configures the console's single sign-on with
 * it, members of the `acme-editors` group mapped to editors of acme-research. Close the provider
 * after the console.
 */
export async function startSsoForConsole(c: Console, users: TestUser[]) {
  const op = await startOidcProvider({ users, redirectUris: [`${c.url}/v1/session/sso/callback`] });
  c.deps.config.sso = { issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, publicUrl: c.url, scopes: 'openid email profile groups' };
  const m = await c.api('POST', '/v1/sso/mappings', { id: 'acme-editors', claim: 'groups', value: 'acme-editors', role: 'editor', tenants: ['acme-research'] });
  if (m.status !== 201) {
    await op.close();
    throw new Error(`mapping: ${m.text}`);
  }
  return op;
}

/**
 * Signs `page` in through the test OpenID provider (test/fixtures/oidc) as `sub`: the console's
 * SSO link, the provider's own login and consent pages, then back in the console.
 */
export async function signInThroughProvider(page: Page, consoleUrl: string, sub: string): Promise<void> {
  await page.goto(`${consoleUrl}/`);
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}
