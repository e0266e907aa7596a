// The console's tools page with 5,000 tools, in Debian's chromium against a real server: how long
// a filter, a search, a sort and a page turn take until the table shows the answer, and what the
// API answers cost. Prints figures; asserts nothing. Needs `npm run build:web` first.
import { request } from 'node:http';
import { ADMIN_TOKEN, startConsole } from '../e2e/harness.ts';
import { seedTools } from './console-scale.ts';

const TOOLS = 5000;
const ROUNDS = 5;

/** Bytes on the wire (no decompression, unlike fetch) and the encoding the server chose. */
function wire(url: string, encoding: string): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-encoding': encoding } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ bytes, encoding: String(res.headers['content-encoding'] ?? 'identity') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const c = await startConsole();

/** The console's main script, plain and as the browser gets it (brotli). */
async function page0Asset(): Promise<{ plain: number; br: number }> {
  const html = await (await fetch(`${c.url}/`)).text();
  const src = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  return { plain: (await wire(c.url + src, 'identity')).bytes, br: (await wire(c.url + src, 'br')).bytes };
}
try {
  await seedTools(c, TOOLS);

  // The API alone: one page, filtered and sorted, as the table asks for it.
  const apiTimes: number[] = [];
  const pageUrl = `${c.url}/v1/tools?limit=50&redaction=none&sort=effect&order=desc`;
  await wire(pageUrl, 'gzip');
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    await wire(pageUrl, 'gzip');
    apiTimes.push(performance.now() - t0);
  }
  const pageGzip = await wire(pageUrl, 'gzip');
  const pagePlain = await wire(pageUrl, 'identity');
  const wholeGzip = await wire(`${c.url}/v1/tools`, 'gzip');
  const wholePlain = await wire(`${c.url}/v1/tools`, 'identity');
  const asset = await page0Asset();

  const { page } = await c.newSession();
  // The machine may be shared: generous waits, the figures are what matters.
  page.setDefaultTimeout(120_000);
  await c.login(page);
  await page.goto(`${c.url}/#/tools`);
  const count = page.locator('.table-count');
  await count.getByText(/of 50\d\d tool\(s\)/).waitFor();

  /** Time from an action until the table's count line reads `expected`. */
  const timeUntil = async (action: () => Promise<unknown>, expected: RegExp) => {
    const t0 = performance.now();
    await action();
    await count.getByText(expected).waitFor();
    return performance.now() - t0;
  };
  const status = page.getByLabel('Status');
  const redaction = page.getByLabel('Redaction');
  const search = page.getByLabel('Search');
  const filterTimes: number[] = [];
  const searchTimes: number[] = [];
  const sortTimes: number[] = [];
  const pageTimes: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    filterTimes.push(await timeUntil(() => status.selectOption('quarantined'), /of 500 tool\(s\)/));
    filterTimes.push(await timeUntil(() => redaction.selectOption('none'), /of 250 tool\(s\)/));
    filterTimes.push(await timeUntil(() => status.selectOption(''), /of 12\d\d tool\(s\)/));
    await redaction.selectOption('');
    await count.getByText(/of 50\d\d tool\(s\)/).waitFor();
    const target = `tool-${String(1000 + r).padStart(4, '0')}`;
    searchTimes.push(await timeUntil(() => search.pressSequentially(target, { delay: 30 }), /^1–1 of 1 tool\(s\)/));
    await search.fill('');
    await count.getByText(/of 50\d\d tool\(s\)/).waitFor();
    const pageStart = `${r % 2 ? 1 : 51}–`;
    pageTimes.push(await timeUntil(() => page.getByRole('button', { name: r % 2 ? 'Previous page' : 'Next page' }).click(), new RegExp(`^${pageStart}`)));
  }
  for (let r = 0; r < ROUNDS; r++) {
    const firstRow = () => page.evaluate(() => document.querySelector('table[aria-label="Tools"] tbody tr a')?.textContent ?? '');
    const before = await firstRow();
    const t0 = performance.now();
    await page.getByRole('button', { name: 'Effect' }).click();
    await page.waitForFunction((was) => (document.querySelector('table[aria-label="Tools"] tbody tr a')?.textContent ?? '') !== was, before);
    sortTimes.push(performance.now() - t0);
  }
  const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);

  console.log(`tools in the inventory: ${TOOLS}`);
  console.log(
    `GET /v1/tools?limit=50 (filtered, sorted): median ${ms(median(apiTimes))}; ${pagePlain.bytes} bytes, ${pageGzip.bytes} bytes ${pageGzip.encoding}`,
  );
  console.log(`GET /v1/tools (every tool, as old callers ask): ${wholePlain.bytes} bytes, ${wholeGzip.bytes} bytes ${wholeGzip.encoding}`);
  console.log(`console JavaScript: ${asset.plain} bytes, ${asset.br} bytes br`);
  console.log(`filter change → table updated: median ${ms(median(filterTimes))}, max ${ms(Math.max(...filterTimes))} (${filterTimes.length} changes)`);
  console.log(
    `typing a 9-character search (30 ms/key) → one result shown: median ${ms(median(searchTimes))} from the first key (includes typing and the 250 ms pause)`,
  );
  console.log(`page turn → next 50 shown: median ${ms(median(pageTimes))}`);
  console.log(`sort by effect → table updated: median ${ms(median(sortTimes))}`);
  console.log(`tools page: ${nodes} DOM elements, ${height} px tall`);
} finally {
  await c.close();
}
