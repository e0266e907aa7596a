import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInThroughProvider, startConsole, startSsoForConsole, type Console } from './harness.ts';

// A person signs in to the console through a real OpenID provider (oidc-provider on loopback):
// its own login and consent pages, in Debian's Chromium.
let c: Console;
let op: Awaited<ReturnType<typeof startSsoForConsole>>;
const ada = { sub: 'ada-1815', email: 'ada@example.com', name: 'Ada Lovelace', groups: ['acme-editors'] };

beforeAll(async () => {
  c = await startConsole();
  op = await startSsoForConsole(c, [ada]);
});

afterAll(async () => {
  await c?.close();
  await op?.close();
});

describe('single sign-on in a real browser', () => {
  it('signs in at the provider, edits its tenant, is refused on another, and appears by name in the audit trail', async () => {
    const { context, page } = await c.newSession();
    try {
      await signInThroughProvider(page, c.url, ada.sub);

      // Back in the console, as Ada.
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.getByRole('banner').getByText('Ada Lovelace').waitFor();
      expect(await page.getByRole('link', { name: 'Tokens' }).count()).toBe(0);

      await page.goto(`${c.url}/#/tenants/acme-research`);
      const ttl = page.getByLabel('Bundle TTL (seconds)');
      await ttl.waitFor();
      await ttl.fill('5400');
      await page.getByLabel('Reason for this change').fill('Ada shortens the bundle lifetime');
      await page.getByRole('button', { name: 'Save draft', exact: true }).click();
      await page.getByText(/Draft saved/).waitFor();
      expect((await c.api('GET', '/v1/tenants/acme-research/policy')).json.bundleTtlSeconds).toBe(5400);

      // Another tenant is out of reach: the server answers as if it did not exist.
      await page.goto(`${c.url}/#/tenants/globex-eng`);
      await page.getByText(/tenant globex-eng does not exist/).waitFor();
      const direct = await page.request.get(`${c.url}/v1/tenants/globex-eng/policy`);
      expect(direct.status()).toBe(404);

      // Signing out ends the session here and continues at the provider's end-session page.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((u) => u.href.startsWith(`${op.issuer}/session/end`));
      expect((await page.request.get(`${c.url}/v1/session`)).status()).toBe(401);
    } finally {
      await context.close();
    }

    // An admin finds Ada, by name and email, in the audit trail.
    const admin = await c.newSession();
    try {
      await c.login(admin.page);
      await admin.page.goto(`${c.url}/#/audit?actor=${encodeURIComponent(ada.email)}`);
      const item = admin.page.getByRole('list', { name: 'Audit timeline' }).getByRole('listitem').filter({ hasText: 'Ada shortens the bundle lifetime' });
      await item.waitFor();
      expect(await item.innerText()).toContain('Ada Lovelace <ada@example.com>');

      // The actor filter takes the person as the timeline names them, and suggests them.
      await admin.page.goto(`${c.url}/#/audit`);
      const timeline = admin.page.getByRole('list', { name: 'Audit timeline' });
      await timeline.getByRole('listitem').filter({ hasText: 'Ada shortens the bundle lifetime' }).waitFor();
      expect(await admin.page.locator('datalist option[value="Ada Lovelace <ada@example.com>"]').count()).toBe(1);
      for (const typed of ['Ada Lovelace <ada@example.com>', 'Ada Lovelace']) {
        await admin.page.getByLabel('Actor').fill('');
        await admin.page.waitForFunction(() => !window.location.hash.includes('actor='));
        await admin.page.getByLabel('Actor').fill(typed);
        await admin.page.waitForFunction(() => decodeURIComponent(window.location.hash).includes('actor=user:ada-1815'));
        await timeline.getByRole('listitem').filter({ hasText: 'Ada shortens the bundle lifetime' }).waitFor();
        expect(await timeline.getByRole('listitem').filter({ hasNotText: 'by Ada Lovelace <ada@example.com>' }).count()).toBe(0);
      }
      await admin.page.getByLabel('Actor').fill('');
      // An opened event offers to filter by its person too, and names them in the field.
      await timeline.getByRole('listitem').filter({ hasText: 'Ada shortens the bundle lifetime' }).first().locator('summary').click();
      await timeline.getByRole('button', { name: 'Show only events by Ada Lovelace <ada@example.com>' }).first().click();
      await admin.page.waitForFunction(() => decodeURIComponent(window.location.hash).includes('actor=user:ada-1815'));
      expect(await admin.page.getByLabel('Actor').inputValue()).toBe('Ada Lovelace <ada@example.com>');
    } finally {
      await admin.context.close();
    }
  });

  it('lets an admin add and edit a mapping on the Single sign-on page and check what pasted claims would get', async () => {
    const { context, page } = await c.newSession();
    try {
      await c.login(page);
      await page.getByRole('link', { name: 'Single sign-on' }).click();
      const mappings = page.getByRole('table', { name: 'Mappings' });
      await mappings.getByRole('cell', { name: 'acme-editors', exact: true }).first().waitFor();

      const form = page.getByRole('form', { name: 'New mapping' });
      await form.getByLabel('Mapping id').fill('globex-viewers');
      await form.getByLabel('Value').fill('globex-readers');
      await form.getByLabel('Role').selectOption('viewer');
      await form.getByLabel('globex-eng').check();
      await form.getByRole('button', { name: 'Add mapping' }).click();
      await mappings.getByRole('cell', { name: 'globex-viewers', exact: true }).waitFor();
      expect((await c.api('GET', '/v1/sso/mappings/globex-viewers')).json).toMatchObject({
        claim: 'groups',
        value: 'globex-readers',
        role: 'viewer',
        tenants: ['globex-eng'],
      });

      // Edited in place: the same mapping (id, audit trail) now gives acme-research too.
      await mappings.getByRole('button', { name: 'Edit globex-viewers' }).click();
      const edit = page.getByRole('form', { name: 'Edit mapping globex-viewers' });
      expect(await edit.getByLabel('Mapping id').getAttribute('readonly')).not.toBeNull();
      expect(await edit.getByLabel('globex-eng').isChecked()).toBe(true);
      await edit.getByLabel('acme-research').check();
      await edit.getByRole('button', { name: 'Save mapping' }).click();
      await page.getByRole('status').getByText('Saved mapping globex-viewers.').waitFor();
      await page.getByRole('form', { name: 'New mapping' }).waitFor();
      await mappings.getByRole('row', { name: /globex-viewers.*acme-research, globex-eng|globex-viewers.*globex-eng, acme-research/ }).waitFor();
      expect((await c.api('GET', '/v1/sso/mappings/globex-viewers')).json).toMatchObject({
        role: 'viewer',
        tenants: expect.arrayContaining(['globex-eng', 'acme-research']),
        version: 2,
      });
      const events = (await c.api('GET', '/v1/audit?entityType=sso-mapping&entityId=globex-viewers')).json.items;
      expect(events.map((e: { action: string }) => e.action)).toEqual(['create', 'update']);

      await page.getByLabel('ID-token claims (JSON)').fill(JSON.stringify({ sub: 'x', groups: ['acme-editors', 'globex-readers'] }));
      await page.getByRole('button', { name: 'Show access' }).click();
      const answer = page.getByRole('status').filter({ hasText: 'Role editor' });
      await answer.waitFor();
      expect(await answer.innerText()).toMatch(/acme-research: editor[\s\S]*globex-eng: viewer/);

      await page.getByLabel('ID-token claims (JSON)').fill('{"groups": ["nobody"]}');
      await page.getByRole('button', { name: 'Show access' }).click();
      await page.getByText(/No access: no mapping matches these claims/).waitFor();
      await page.getByLabel('ID-token claims (JSON)').fill('{"groups": ');
      await page.getByRole('button', { name: 'Show access' }).click();
      await page.getByRole('alert').filter({ hasText: 'Not JSON' }).waitFor();
    } finally {
      await context.close();
    }
  });
});
