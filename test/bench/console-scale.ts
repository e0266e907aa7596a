// The console with 5,000 tools in the inventory, in Debian's chromium against a real server: the
// timings issue 33 sets targets for. Exported so that another benchmark (availability) can print
// the same figures; `console-scale.bench.ts` runs it alone. Needs `npm run build:web` first.
import type { Page } from 'playwright-core';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { ADMIN_TOKEN, type Console, startConsole } from '../e2e/harness.ts';

export type ConsoleScaleFigures = {
  tools: number;
  /** Sign-in clicked → Home's overview shown, ms (one per fresh session). */
  homeAfterSignIn: number[];
  /** GET /v1/overview alone, ms, and the longest the event loop was held meanwhile (every other request waited as long). */
  overview: { duration: number[]; held: number[]; cold?: { duration: number; held: number } };
  /** The policy page opened → the simulator's first answer shown, ms. */
  simulatorFirstAnswer: number[];
  /** A role's group checkbox clicked → the next frame after the checkbox shows its new state, ms. */
  checkboxRepaint: number[];
  /** The same click → the simulator's answer for the edited draft shown, ms. */
  checkboxToAnswer: number[];
  /** The simulator's DOM elements once it has answered. */
  simulatorElements: number;
  /** The last key of a search typed → the table's count line names the one match, ms. */
  filterKeystroke: number[];
  /** The same key → the count line says the server found one tool among all, ms. */
  filterCounted: number[];
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

/** Runs every measurement on a console with `count` extra tools; `rounds` repetitions each. */
export async function measureConsoleAtScale({ count = 5000, rounds = 5 } = {}): Promise<ConsoleScaleFigures> {
  const c = await startConsole();
  try {
    await seedTools(c, count);
    const figures: ConsoleScaleFigures = {
      tools: count,
      homeAfterSignIn: [],
      overview: { duration: [], held: [] },
      simulatorFirstAnswer: [],
      checkboxRepaint: [],
      checkboxToAnswer: [],
      simulatorElements: 0,
      filterKeystroke: [],
      filterCounted: [],
    };

    // GET /v1/overview alone. The server runs in this process, so the longest the event loop was
    // held during the request is the longest any other request (/healthz, a bundle pull) waited.
    // The first after start compiles every tenant's draft (cold); the rest find them compiled.
    for (let r = 0; r <= rounds; r++) {
      // A timer that re-arms itself every millisecond: the longest gap between its runs.
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
      const res = await fetch(`${c.url}/v1/overview`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      await res.text();
      const duration = performance.now() - t0;
      await new Promise((done) => setTimeout(done, 5));
      watching = false;
      if (r === 0) figures.overview.cold = { duration, held };
      else {
        figures.overview.duration.push(duration);
        figures.overview.held.push(held);
      }
    }

    // Home after sign-in, each time in a fresh session (no cached answers).
    for (let r = 0; r < rounds; r++) {
      const { context, page } = await c.newSession();
      page.setDefaultTimeout(120_000);
      await page.goto(`${c.url}/`);
      await page.getByLabel('API token').fill(ADMIN_TOKEN);
      const t0 = performance.now();
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: /^Unpublished drafts/ }).waitFor();
      await page.getByRole('heading', { name: /^Quarantined tools waiting for review/ }).waitFor();
      figures.homeAfterSignIn.push(performance.now() - t0);
      await context.close();
    }

    const { context, page } = await c.newSession();
    page.setDefaultTimeout(120_000);
    await c.login(page);

    // The simulator's first answer: from the policy page opened (Home shown before) until it answers.
    const sim = page.getByRole('region', { name: 'Simulator' });
    for (let r = 0; r < rounds; r++) {
      await page.goto(`${c.url}/#/`);
      await page.getByRole('heading', { name: /^Unpublished drafts/ }).waitFor();
      // A fresh load each round: nothing the previous round fetched is reused.
      await page.reload();
      await page.getByRole('heading', { name: /^Unpublished drafts/ }).waitFor();
      const t0 = performance.now();
      await page.evaluate(() => {
        location.hash = '#/tenants/globex-eng';
      });
      await sim.getByText(/^Visible tools \(\d+\)/).waitFor();
      await nextPaint(page);
      figures.simulatorFirstAnswer.push(performance.now() - t0);
    }
    figures.simulatorElements = await sim.evaluate((el) => el.getElementsByTagName('*').length);

    // A checkbox of the policy editor: the coder role's "knowledge" group, on and off again.
    const box = page.getByRole('region', { name: 'Role coder' }).getByRole('group', { name: 'Groups of coder' }).getByRole('checkbox', { name: 'knowledge' });
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
      // The answer for the edited draft names the groups asked for: with or without knowledge.
      const asked = await handle.isChecked();
      await page.waitForFunction((want) => {
        const line = document.querySelector('.sim-result p')?.textContent ?? '';
        return /Groups: [^·]*\bknowledge\b/.test(line) === want;
      }, asked);
      await nextPaint(page);
      figures.checkboxToAnswer.push(performance.now() - t0);
    }
    // An even number of toggles: the draft is as saved again.

    // The tools page's search: the last key of an id typed → one result counted.
    await page.goto(`${c.url}/#/tools`);
    const countLine = page.locator('.table-count');
    await countLine.getByText(/^1–50 of \d+ tool\(s\)/).waitFor();
    const everyTool = new RegExp(`^${(await countLine.textContent())!.replace(/[()·]/g, '.').slice(0, 20)}`);
    const search = page.getByLabel('Search');
    for (let r = 0; r < rounds; r++) {
      const target = `tool-${String((count > 1010 ? 1000 : 100) + r).padStart(4, '0')}`;
      await search.pressSequentially(target.slice(0, -1), { delay: 30 });
      await countLine.getByText(/^1–\d+ of \d+ tool\(s\)/).waitFor();
      const t0 = performance.now();
      await search.press(target.slice(-1));
      // The table shows the one tool only: the results.
      await page.waitForFunction((id) => {
        const rows = [...document.querySelectorAll('table[aria-label="Tools"] tbody tr')];
        return rows.length === 1 && rows[0]!.textContent!.includes(id);
      }, target);
      figures.filterKeystroke.push(performance.now() - t0);
      await countLine.getByText(/^1–1 of 1 tool\(s\)/).waitFor();
      figures.filterCounted.push(performance.now() - t0);
      await search.fill('');
      await countLine.getByText(everyTool).waitFor();
    }
    await context.close();
    return figures;
  } finally {
    await c.close();
  }
}

const sorted = (xs: number[]) => [...xs].filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
export const p50 = (xs: number[]) => sorted(xs)[Math.floor(sorted(xs).length / 2)] ?? Number.NaN;
export const max = (xs: number[]) => sorted(xs).at(-1) ?? Number.NaN;

/** The figures as lines of text, each beside its target. */
export function consoleScaleLines(f: ConsoleScaleFigures): string[] {
  const ms = (x: number) => `${Math.round(x)} ms`;
  const row = (what: string, xs: number[], target: string) => `${what}: p50 ${ms(p50(xs))}, max ${ms(max(xs))} (${xs.length} runs; target ${target})`;
  return [
    `console with ${f.tools.toLocaleString('en-US')} extra tools`,
    row('simulator first answer', f.simulatorFirstAnswer, '≤ 1,000 ms'),
    row('checkbox repaint', f.checkboxRepaint, '≤ 100 ms'),
    row('checkbox → simulator answer for the edit', f.checkboxToAnswer, 'none'),
    `simulator DOM elements after its answer: ${f.simulatorElements}`,
    row('Home after sign-in', f.homeAfterSignIn, '≤ 1,000 ms'),
    `GET /v1/overview, first after start (drafts compiled cold): ${ms(f.overview.cold?.duration ?? Number.NaN)}, event loop held at most ${ms(f.overview.cold?.held ?? Number.NaN)}`,
    row('GET /v1/overview', f.overview.duration, 'none'),
    row('event loop held at most, during GET /v1/overview', f.overview.held, 'not held up'),
    row('tools search: last key → the table shows the one match', f.filterKeystroke, '≤ 200 ms'),
    row('tools search: last key → the server counts one match among all', f.filterCounted, 'none'),
  ];
}
