import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startConsole, type Console } from './harness.ts';

let c: Console;
let page: Page;

beforeAll(async () => {
  c = await startConsole();
  ({ page } = await c.newSession());
  page.on('dialog', (d) => void d.accept());
});

afterAll(async () => {
  await c?.close();
});

describe('keys, trust and checkpoints in the console', () => {
  it('lets an admin stage a rotation (add, promote, retire) with reasons, and shows it in the audit log', async () => {
    await c.login(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
    await page
      .getByRole('region', { name: 'Key set' })
      .getByText(/Key set v1/)
      .waitFor();
    const table = page.getByRole('table', { name: 'Signing keys' });
    const first = (await table.getByRole('row').nth(1).innerText()).split(/\s/)[0];
    await expect(table.getByRole('row').nth(1).innerText()).resolves.toMatch(/active\s+signing/);

    await page.getByLabel('Reason for the change (required, audited)').fill('quarterly rotation');
    await page.getByRole('button', { name: 'Add next key' }).click();
    await page.getByText(/A next key was added/).waitFor();
    await table.getByText('next', { exact: true }).waitFor();
    const next = (await table.getByRole('row').nth(2).innerText()).split(/\s/)[0];

    await page.getByLabel('Reason for the change (required, audited)').fill('runtimes have the key set');
    await page.getByRole('button', { name: `Promote ${next}` }).click();
    await page.getByText(`${next} now signs.`).waitFor();
    await page.getByLabel('Reason for the change (required, audited)').fill('old key no longer used');
    await page.getByRole('button', { name: `Retire ${first}` }).click();
    await page.getByText(`${first} retired.`).waitFor();
    await page
      .getByRole('region', { name: 'Key set' })
      .getByText(/Key set v4/)
      .waitFor();
    await c.shot(page, 'keys');

    const events = await c.api('GET', '/v1/audit?entityType=key');
    expect(events.json.items.map((e: { action: string; reason: string }) => [e.action, e.reason])).toEqual([
      ['rotate', 'quarterly rotation'],
      ['promote', 'runtimes have the key set'],
      ['retire', 'old key no longer used'],
    ]);
  });

  it('says so when someone else changed the keys since the page showed them, shows the keys as they are, and changes nothing', async () => {
    await page.goto(`${c.url}/#/keys`);
    const shown = await c.api('GET', '/v1/keys');
    const version = shown.json.keySet.version as number;
    const region = page.getByRole('region', { name: 'Key set' });
    await region.getByText(`Key set v${version},`).waitFor();

    // Another admin adds a key while this page still shows the key set as it was.
    const other = await c.api('POST', '/v1/keys/rotate', { reason: 'another admin' }, { 'If-Match': shown.headers.get('etag') ?? '' });
    expect(other.status, other.text).toBe(201);
    await page.getByLabel('Reason for the change (required, audited)').fill('based on what the page showed');
    await page.getByRole('button', { name: 'Add next key' }).click();
    await page.getByRole('alert').getByText('Someone else changed the keys').waitFor();
    await page.getByText(`the key set is now v${version + 1}`).waitFor();
    await region.getByText(`Key set v${version + 1},`).waitFor();
    await page.getByRole('button', { name: `Promote ${other.json.kid}` }).waitFor();
    const after = await c.api('GET', '/v1/keys');
    expect(after.json.keySet.version).toBe(version + 1);
    expect(after.json.keys.filter((k: { status: string }) => k.status === 'next').map((k: { kid: string }) => k.kid)).toEqual([other.json.kid]);
    const events = (await c.api('GET', '/v1/audit?entityType=key')).json.items.map((e: { reason: string }) => e.reason);
    expect(events).not.toContain('based on what the page showed');

    // The reason is kept; trying again on the keys now shown goes through.
    await page.getByRole('button', { name: 'Add next key' }).click();
    await page.getByText(/A next key was added/).waitFor();
    await region.getByText(`Key set v${version + 2},`).waitFor();
    expect((await c.api('GET', '/v1/audit?entityType=key')).json.items.map((e: { reason: string }) => e.reason)).toContain('based on what the page showed');
  });

  it('shows a viewer the keys without any action', async () => {
    const token = (await c.api('POST', '/v1/tokens', { label: 'viewer', role: 'viewer', tenants: ['globex-eng'] })).json.token;
    const { page: viewer } = await c.newSession();
    await c.login(viewer, token);
    await viewer.goto(`${c.url}/#/keys`);
    await viewer.getByRole('table', { name: 'Signing keys' }).waitFor();
    expect(await viewer.getByRole('button', { name: /Promote|Retire|Add next key/ }).count()).toBe(0);
    await viewer.getByText('Only admins change keys.').waitFor();
  });

  it('checks a bundle in the browser against a pasted root, says what the server-named root does not prove, and refuses a foreign root', async () => {
    expect((await c.api('POST', '/v1/tenants/globex-eng/bundles', { reason: 'for the in-browser check' })).status).toBe(201);
    const roots = (await c.api('GET', '/.well-known/toolgate-keyset.json')).json.roots;
    await page.goto(`${c.url}/#/tenants/globex-eng/publish`);
    const rootField = page.getByLabel('Root public key to check against (what your runtimes are configured with)');

    await rootField.fill('');
    await page.getByRole('button', { name: 'Verify signature' }).click();
    await page.getByText(/Consistent, but not proof/).waitFor();

    await rootField.fill(JSON.stringify({ keys: roots }));
    await page.getByRole('button', { name: 'Verify signature' }).click();
    await page.getByText(new RegExp(`Verified against your root key ${roots[0].kid}: key set v\\d+ lists key \\S+ \\(active\\)`)).waitFor();

    const foreign = { kty: 'OKP', crv: 'Ed25519', x: Buffer.alloc(32, 7).toString('base64url') };
    await rootField.fill(JSON.stringify(foreign));
    await page.getByRole('button', { name: 'Verify signature' }).click();
    await page.getByText(/not the root key you pasted/).waitFor();
    await rootField.fill('not json');
    await page.getByRole('button', { name: 'Verify signature' }).click();
    await page.getByText(/The root key is not JSON/).waitFor();
  });

  it('shows the latest audit checkpoint after an export and lets an auditor download it', async () => {
    const token = (await c.api('POST', '/v1/tokens', { label: 'auditor', role: 'auditor' })).json.token;
    const { page: auditor } = await c.newSession();
    await c.login(auditor, token);
    await auditor.goto(`${c.url}/#/audit`);
    const region = auditor.getByRole('region', { name: 'Latest checkpoint' });
    await region.getByText(/No checkpoint yet/).waitFor();
    const exported = auditor.waitForEvent('download');
    await auditor.getByRole('button', { name: 'Export JSONL' }).click();
    await exported;
    await region.getByText(/Event #\d+, signed/).waitFor();
    const saved = auditor.waitForEvent('download');
    await region.getByRole('button', { name: 'Download checkpoint' }).click();
    const file = await (await saved).path();
    const cp = JSON.parse(readFileSync(file!, 'utf8'));
    expect(cp).toEqual((await c.api('GET', '/v1/audit/checkpoints/latest')).json);
    expect(cp.format).toBe('toolgate.audit-checkpoint/v1');
  });
});
