// A runtime names the bundle version it holds in `Toolgate-Version`, so that the same content
// re-issued as a later version (a rollback to it, a re-issue that moves its expiry) is news even
// though its ETag is the one the runtime names. Whatever that header holds, a pull gets a clear
// answer, never a 500, and never a 304 that would keep a runtime on an older version.
import { type OutgoingHttpHeaders, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LiveServer, startLiveServer } from './live-server.ts';
import { makeKey, makeSignedBundle } from './signed-bundles.ts';

let srv: LiveServer;
let runtime: string;
let etag: string;
let otherEtag: string;

beforeAll(async () => {
  srv = await startLiveServer();
  await srv.createTenant('acme');
  runtime = await srv.tokenFor('runtime', ['acme']);
  const key = await makeKey('k1');
  const first = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
  // Version 2 re-issues version 1's content: same revision, so the same ETag.
  const reissue = await makeSignedBundle({ tenant: 'acme', version: 2, previousRevision: first.bundle.revision }, key);
  expect(reissue.bundle.revision).toBe(first.bundle.revision);
  await srv.place('acme', 1, { ...first, revision: first.bundle.revision });
  await srv.place('acme', 2, { ...reissue, revision: reissue.bundle.revision });
  etag = `"${reissue.bundle.revision}"`;
  otherEtag = '"sha256:0000000000000000000000000000000000000000000000000000000000000000"';
});
afterAll(async () => srv?.dispose());

/** How many pulls the server's listener answered itself, as its /metrics says. */
async function answeredByListener(): Promise<number> {
  return Number(/^toolgate_listener_pull_answers_total (\d+)$/m.exec((await srv.api('GET', '/metrics')).text)?.[1] ?? Number.NaN);
}

/** One pull on its own connection; `version` may be several header lines. */
function pull(version: string | string[] | undefined, inm = etag, query = ''): Promise<{ status: number; version?: string; body: string }> {
  const headers: OutgoingHttpHeaders = { authorization: `Bearer ${runtime}`, 'if-none-match': inm };
  if (version !== undefined) headers['toolgate-version'] = version;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path: `/v1/tenants/acme/bundles/latest${query}`, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, version: res.headers['toolgate-version'] as string | undefined, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Toolgate-Version on a pull of the latest bundle whose ETag the client names', () => {
  const held: [string, string | string[] | undefined][] = [
    ['no header (the ETag alone decides)', undefined],
    ['the latest version', '2'],
    ['a version above the latest (the client holds this content, whatever it calls it)', '7'],
    ['the latest version with a leading zero', '02'],
  ];
  for (const [name, version] of held) {
    it(`answers 304 to ${name}`, async () => {
      // Twice: the first may go through the app, the second the listener's shortcut.
      for (let i = 0; i < 2; i++) expect(await pull(version)).toMatchObject({ status: 304, version: '2', body: '' });
      // The second answered by the listener (its caches now warm) reads the header as the app does.
      const before = await answeredByListener();
      expect(await pull(version)).toMatchObject({ status: 304, version: '2', body: '' });
      expect(await answeredByListener()).toBe(before + 1);
    });
  }

  const news: [string, string | string[]][] = [
    ['an older version of the same content', '1'],
    ['zero', '0'],
    ['a negative version', '-1'],
    ['a non-numeric value', 'latest'],
    ['an empty value', ''],
    ['a fraction', '1.5'],
    ['a hexadecimal number', '0x7'],
    ['an exponent', '1e3'],
    ['Infinity', 'Infinity'],
    ['a number too large to be exact', '99999999999999999999'],
    ['two header lines', ['2', '2']],
    ['a list in one line', '1, 2'],
  ];
  for (const [name, version] of news) {
    it(`sends the bundle to ${name}, as to a client that holds no version`, async () => {
      for (let i = 0; i < 2; i++) {
        const a = await pull(version);
        expect(a.status).toBe(200);
        expect(a.version).toBe('2');
        expect(JSON.parse(a.body)).toMatchObject({ tenant: 'acme', version: 2 });
      }
    });
  }

  it('answers a long poll with an unreadable version at once, with the bundle', async () => {
    const a = await pull('soon', etag, '?wait=30');
    expect(a).toMatchObject({ status: 200, version: '2' });
  });

  it('sends the bundle whatever version is claimed when the ETag named is not the latest', async () => {
    for (const version of ['2', '7', '99999999999999999999', 'latest']) expect((await pull(version, otherEtag)).status).toBe(200);
  });
});
