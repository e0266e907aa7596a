import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Counters and versions a runtime reports land in INTEGER columns (4 bytes on PostgreSQL). Any
// JSON integer used to pass the schema: 1e300 or 2^31 made PostgreSQL fail the insert (a 500), and
// SQLite stored a float that the API then served as a version. They are refused with a pointer.

const tenant = 'acme-research';
const INT4_MAX = 2147483647;
let t: TestApp;
let runtime: string;
beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', [tenant]);
});
afterAll(async () => t.close());

let seq = 0;
const record = (bundleVersion: string) =>
  `{"at":"${new Date(Date.now() - 1000).toISOString()}","toolCallId":"int-${++seq}","subject":"agent:research-bot","groups":["knowledge"],"state":"undefined","tool":"core__knowledge-query","decision":"allow","bundleVersion":${bundleVersion}}`;
const batch = (runtimeId: string, bundleVersion: string, dropped = '0') =>
  `{"runtimeId":"${runtimeId}","dropped":${dropped},"records":[${record(bundleVersion)}]}`;
const post = (path: string, raw: string) => t.request('POST', `/v1/tenants/${tenant}/${path}`, { token: runtime, raw });
const stored = async (runtimeId: string) =>
  (await t.request('GET', `/v1/tenants/${tenant}/decisions?runtimeId=${runtimeId}`)).json.items as { bundleVersion: number }[];

describe('integers a runtime reports stay within what the database stores', () => {
  for (const big of ['1e300', '2147483648', '18446744073709551616']) {
    it(`refuses a decision record's bundleVersion ${big} with its pointer, storing nothing`, async () => {
      const r = await post('decisions', batch(`big-version-${seq}`, big));
      expect(r.status).toBe(400);
      expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/records/0/bundleVersion' })]);
      expect(await stored(`big-version-${seq}`)).toEqual([]);
    });

    it(`refuses a batch's dropped count ${big}`, async () => {
      const r = await post('decisions', batch('big-dropped', '1', big));
      expect(r.status).toBe(400);
      expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/dropped' })]);
    });

    it(`refuses a status report's version ${big}`, async () => {
      const r = await post('runtimes/status', `{"runtimeId":"big-status","version":${big},"health":"fresh"}`);
      expect(r.status).toBe(400);
      expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/version' })]);
      const runtimes = (await t.request('GET', `/v1/tenants/${tenant}/runtimes`)).json.runtimes as { runtimeId: string }[];
      expect(runtimes.map((x) => x.runtimeId)).not.toContain('big-status');
    });
  }

  it('takes the largest stored value and reads it back exactly', async () => {
    expect((await post('decisions', batch('int-max', String(INT4_MAX), String(INT4_MAX)))).status).toBe(202);
    expect((await stored('int-max')).map((d) => d.bundleVersion)).toEqual([INT4_MAX]);
    expect((await post('runtimes/status', `{"runtimeId":"int-max","version":${INT4_MAX},"health":"fresh"}`)).status).toBe(204);
  });
});
