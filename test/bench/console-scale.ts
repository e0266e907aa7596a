// The console at scale, in Debian's chromium against a real server: the timings issue 33 sets
// targets for. `measureConsole` drives any running server (the availability benchmark points it at
// its million-row server); `measureConsoleAtScale` starts one of its own, the demo data with 5,000
// imported tools, and also times the overview in process. `console-scale.bench.ts` prints the
// latter alone. Both build the console first when its sources are newer than dist/web.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { ADMIN_TOKEN, type Console, startConsole } from '../e2e/harness.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Builds the console (dist/web) when a source is newer than the last build, as the server is built for `serve`. */
export function buildConsoleIfStale(): void {
  // A benchmark pointed at another build of the console (TOOLGATE_E2E_WEB_DIR) measures that one as it is.
  if (process.env.TOOLGATE_E2E_WEB_DIR) return;
  const built = spawnSync(process.execPath, [join(root, 'scripts/build.mjs'), 'web', '--if-stale'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building the console failed');
}

/** The console build a server should serve: dist/web, or the one TOOLGATE_E2E_WEB_DIR names. */
export const consoleWebDir = () => process.env.TOOLGATE_E2E_WEB_DIR ?? join(root, 'dist/web');

/** A running server and what to click on it. */
export type ConsoleTarget = {
  url: string;
  /** Signs in through the login form. */
  token: string;
  /** The tenant whose policy page (and simulator) is opened. */
  tenant: string;
  /** The simulator's subject while the checkbox is timed (default: the first it offers). */
  subject?: string;
  /** A checkbox of the policy editor: `group` among the groups of `role` (a role of the subject; toggling the group changes what it asks for). */
  checkbox: { role: string; group: string };
  /** One search per round, each naming one tool only while the search without its last character names several. */
  searches: string[];
};

/** What a browser measures on any server. */
export type ConsoleFigures = {
  /** Sign-in clicked → Home's overview shown, ms (one per fresh session). */
  homeAfterSignIn: number[];
  /** The policy page opened → the simulator's first answer shown, ms. */
  simulatorFirstAnswer: number[];
  /** A role's group checkbox clicked → the next frame after the checkbox shows its new state, ms. */
  checkboxRepaint: number[];
  /** The same click → the simulator's answer for the edited draft shown, ms. */
  checkboxToAnswer: number[];
  /** The simulator's DOM elements once it has answered. */
  simulatorElements: number;
  /** The last key of a search typed → the table shows the one match, ms. */
  filterKeystroke: number[];
  /** The same key → the count line says the server found one tool among all, ms. */
  filterCounted: number[];
};

/** A GET /v1/overview: how long it took and the longest the server's event loop was held meanwhile. */
export type OverviewTiming = { duration: number; held: number };

export type ConsoleScaleFigures = ConsoleFigures & {
  tools: number;
  /**
   * GET /v1/overview alone; the server runs in this process, so the longest its event loop was held
   * is the longest every other request (/healthz, a bundle pull) waited. `cold`: the first after
   * start; `afterDraftChange`: the first after a tenant's draft was saved; the rest found it computed.
   * `quiet`: the longest hold during a second of nothing, beside it (on a busy machine the process
   * itself waits for a core).
   */
  overview: { duration: number[]; held: number[]; quiet?: OverviewTiming; cold?: OverviewTiming; afterDraftChange?: OverviewTiming };
};

/** Inserts `count` imported tools straight into the inventory (the API would take minutes). */
export async function seedTools(c: Console, count: number): Promise<void> {
  const now = new Date().toISOString();
  const effects: Tool['effect'][] = ['read_only', 'state_change', 'external_side_effect'];
  await c.deps.database.db.transaction().execute(async (tx) => {
    for (let i = 0; i < count; i++) {
      const id = `mcp__bench__tool-${String(i).padStart(4, '0')}`;
      const description = `Benchmark tool number ${i}, imported from a large MCP server.`;
      const inputSchema = { type: 'object', properties: { q: { type: 'string', description: `Query for tool ${i}` } } };
      const tool: Tool = {
        id,
        description,
        inputSchema,
        effect: effects[i % 3]!,
        groups: ['default', i % 2 ? 'knowledge' : 'basic'],
        status: i % 10 === 0 ? 'quarantined' : 'active',
        ...(i % 4 === 0 ? {} : { redaction: { allow: ['result'] } }),
        source: { kind: 'mcp', server: 'bench', originalName: `tool-${i}` },
        definitionHash: definitionHash({ name: `tool-${i}`, description, inputSchema }),
      };
      await toolStore.insert(tx, id, tool, now);
    }
  });
}

/** Waits for the next frame to have been painted (a task after the next animation frame). */
const nextPaint = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0))));

/** The longest gap between runs of a timer that re-arms itself every millisecond, while `work` runs. */
async function heldDuring(work: () => Promise<unknown>): Promise<OverviewTiming> {
  let last = performance.now();
  let held = 0;
  let watching = true;
  const tick = () => {
    const now = performance.now();
    held = Math.max(held, now - last);
    last = now;
    if (watching) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  const t0 = performance.now();
  await work();
  const duration = performance.now() - t0;
  await new Promise((done) => setTimeout(done, 5));
  watching = false;
  return { duration, held };
}

/**
 * Runs every measurement on a console with `count` extra tools; `rounds` repetitions each. `build`:
 * build the console first when stale (a caller that has built it already passes false, so that
 * a source edited meanwhile cannot give its figures two different builds).
 */
export async function measureConsoleAtScale({ count = 5000, rounds = 5, build = true } = {}): Promise<ConsoleScaleFigures> {
  if (build) buildConsoleIfStale();
  const c = await startConsole();
  try {
    await seedTools(c, count);
    const overview: ConsoleScaleFigures['overview'] = { duration: [], held: [] };
    const getOverview = async () => (await fetch(`${c.url}/v1/overview`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    overview.quiet = await heldDuring(() => new Promise((done) => setTimeout(done, 1000)));
    // The first after start compiles every tenant's draft (cold); the rest find them compiled.
    overview.cold = await heldDuring(getOverview);
    for (let r = 0; r < rounds; r++) {
      const t = await heldDuring(getOverview);
      overview.duration.push(t.duration);
      overview.held.push(t.held);
    }
    // A saved draft (the policy as it is, saved again: a new draft version) is compiled anew.
    const tenant = 'globex-eng';
    const policy = await c.api('GET', `/v1/tenants/${tenant}/policy`);
    const { version: _v, updatedAt: _u, createdAt: _c, tenant: _t, ...draft } = policy.json as Record<string, unknown>;
    const bindings = { ...(draft.bindings as Record<string, string[]>), 'agent:overview-bench': ['coder'] };
    const saved = await c.api('PUT', `/v1/tenants/${tenant}/policy`, { ...draft, bindings }, { 'if-match': policy.headers.get('etag')! });
    if (saved.status !== 200) throw new Error(`saving the draft answered ${saved.status}: ${saved.text}`);
    overview.afterDraftChange = await heldDuring(getOverview);

    const figures = await measureConsole(
      c.browser,
      {
        url: c.url,
        token: ADMIN_TOKEN,
        tenant,
        checkbox: { role: 'coder', group: 'knowledge' },
        searches: Array.from({ length: rounds }, (_, r) => `tool-${String((count > 1010 ? 1000 : 100) + r).padStart(4, '0')}`),
      },
      rounds,
    );
    return { tools: count, overview, ...figures };
  } finally {
    await c.close();
  }
}

/** Signs in, opens the tenant's policy page and the tools page of a running server, `rounds` times each. */
export async function measureConsole(browser: Browser, target: ConsoleTarget, rounds = 5): Promise<ConsoleFigures> {
  const { url, token, tenant } = target;
  const figures: ConsoleFigures = {
    homeAfterSignIn: [],
    simulatorFirstAnswer: [],
    checkboxRepaint: [],
    checkboxToAnswer: [],
    simulatorElements: 0,
    filterKeystroke: [],
    filterCounted: [],
  };
  const newSession = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: url });
    const page = await context.newPage();
    // The machine may be shared: generous waits, the figures are what matters.
    page.setDefaultTimeout(120_000);
    return { context, page };
  };
  const home = (page: Page) => page.getByRole('heading', { name: /^Unpublished drafts/ }).waitFor();

  // Home after sign-in, each time in a fresh session (no cached answers).
  for (let r = 0; r < rounds; r++) {
    const { context, page } = await newSession();
    await page.goto(`${url}/`);
    await page.getByLabel('API token').fill(token);
    const t0 = performance.now();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await home(page);
    await page.getByRole('heading', { name: /^Quarantined tools waiting for review/ }).waitFor();
    figures.homeAfterSignIn.push(performance.now() - t0);
    await context.close();
  }

  const { context, page } = await newSession();
  await page.goto(`${url}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  // The simulator's first answer: from the policy page opened (Home shown before) until it answers.
  const sim = page.getByRole('region', { name: 'Simulator' });
  for (let r = 0; r < rounds; r++) {
    await page.goto(`${url}/#/`);
    await home(page);
    // A fresh load each round: nothing the previous round fetched is reused.
    await page.reload();
    await home(page);
    const t0 = performance.now();
    await page.evaluate((id) => {
      location.hash = `#/tenants/${id}`;
    }, tenant);
    await sim.getByText(/^Visible tools \(\d+\)/).waitFor();
    await nextPaint(page);
    figures.simulatorFirstAnswer.push(performance.now() - t0);
  }
  figures.simulatorElements = await sim.evaluate((el) => el.getElementsByTagName('*').length);

  // The subject whose roles' groups the simulator asks for.
  const { role, group } = target.checkbox;
  if (target.subject) {
    await sim.getByLabel('Subject').fill(target.subject);
    await page.waitForFunction((name) => new RegExp(`Roles: [^·]*\\b${name}\\b`).test(document.querySelector('.sim-result p')?.textContent ?? ''), role);
  }
  // A checkbox of the policy editor, on and off again.
  const box = page
    .getByRole('region', { name: `Role ${role}` })
    .getByRole('group', { name: `Groups of ${role}` })
    .getByRole('checkbox', { name: group, exact: true });
  const handle = (await box.elementHandle())!;
  for (let r = 0; r < rounds * 2; r++) {
    const t0 = performance.now();
    const repaint = await handle.evaluate(
      (el) =>
        new Promise<number>((resolve) => {
          const start = performance.now();
          const was = (el as HTMLInputElement).checked;
          (el as HTMLInputElement).click();
          requestAnimationFrame(() => setTimeout(() => resolve((el as HTMLInputElement).checked !== was ? performance.now() - start : Number.NaN), 0));
        }),
    );
    figures.checkboxRepaint.push(repaint);
    // The answer for the edited draft names the groups asked for: with or without the group.
    const asked = await handle.isChecked();
    await page.waitForFunction(
      ([name, want]) => new RegExp(`Groups: [^·]*\\b${name}\\b`).test(document.querySelector('.sim-result p')?.textContent ?? '') === want,
      [group, asked] as const,
    );
    await nextPaint(page);
    figures.checkboxToAnswer.push(performance.now() - t0);
  }
  // An even number of toggles: the draft is as saved again.

  // The tools page's search: the last key of a search typed → one result shown.
  await page.goto(`${url}/#/tools`);
  const countLine = page.locator('.table-count');
  await countLine.getByText(/^1–50 of \d+ tool\(s\)/).waitFor();
  const everyToolText = (await countLine.textContent())!.slice(0, 20);
  const everyTool = new RegExp(`^${everyToolText.replace(/[()·]/g, '.')}`);
  const search = page.getByRole('searchbox', { name: 'Search' });
  const rows = () => page.evaluate(() => document.querySelectorAll('table[aria-label="Tools"] tbody tr').length);
  for (const term of target.searches.slice(0, rounds)) {
    await search.pressSequentially(term.slice(0, -1), { delay: 30 });
    // The server has answered the search so far: the count line counts a page of its matches, not every tool.
    await page.waitForFunction((all) => {
      const line = document.querySelector('.table-count')?.textContent ?? '';
      return line.startsWith('1–') && !line.startsWith(all);
    }, everyToolText);
    // Otherwise the last key would change nothing, and the figure would be no figure.
    if ((await rows()) < 2) throw new Error(`the search "${term.slice(0, -1)}" already names one tool: choose searches whose last key narrows`);
    const t0 = performance.now();
    await search.press(term.slice(-1));
    // The table shows the one tool only: the results.
    await page.waitForFunction((id) => {
      const shown = [...document.querySelectorAll('table[aria-label="Tools"] tbody tr')];
      return shown.length === 1 && shown[0]!.textContent!.includes(id);
    }, term);
    figures.filterKeystroke.push(performance.now() - t0);
    await countLine.getByText(/^1–1 of 1 tool\(s\)/).waitFor();
    figures.filterCounted.push(performance.now() - t0);
    await search.fill('');
    await countLine.getByText(everyTool).waitFor();
  }
  await context.close();
  return figures;
}

const sorted = (xs: number[]) => [...xs].filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
export const p50 = (xs: number[]) => sorted(xs)[Math.floor(sorted(xs).length / 2)] ?? Number.NaN;
export const max = (xs: number[]) => sorted(xs).at(-1) ?? Number.NaN;

/** The figures as lines of text, each beside its target. */
export function consoleScaleLines(f: ConsoleScaleFigures): string[] {
  const ms = (x: number) => `${Math.round(x)} ms`;
  const row = (what: string, xs: number[], target: string) => `${what}: p50 ${ms(p50(xs))}, max ${ms(max(xs))} (${xs.length} runs; target ${target})`;
  return [
    `console with the demo data and ${f.tools.toLocaleString('en-US')} imported tools`,
    row('simulator first answer', f.simulatorFirstAnswer, '≤ 1,000 ms'),
    row('checkbox repaint', f.checkboxRepaint, '≤ 100 ms'),
    row('checkbox → simulator answer for the edit', f.checkboxToAnswer, 'none'),
    `simulator DOM elements after its answer: ${f.simulatorElements}`,
    row('Home after sign-in', f.homeAfterSignIn, '≤ 1,000 ms'),
    `event loop held at most, during a quiet second: ${ms(f.overview.quiet?.held ?? Number.NaN)}`,
    `GET /v1/overview, first after start (drafts compiled cold): ${ms(f.overview.cold?.duration ?? Number.NaN)}, event loop held at most ${ms(f.overview.cold?.held ?? Number.NaN)}`,
    `GET /v1/overview, first after a draft change: ${ms(f.overview.afterDraftChange?.duration ?? Number.NaN)}, event loop held at most ${ms(f.overview.afterDraftChange?.held ?? Number.NaN)}`,
    row('GET /v1/overview', f.overview.duration, 'none'),
    row('event loop held at most, during GET /v1/overview', f.overview.held, 'not held up'),
    row('tools search: last key → the table shows the one match', f.filterKeystroke, '≤ 200 ms'),
    row('tools search: last key → the server counts one match among all', f.filterCounted, 'none'),
  ];
}
