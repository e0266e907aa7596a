// Profiles through the API (docs/spec.md R6.12): a tool in some profile's enable is profile-scoped,
// visible only under a profile that enables it; disable hides under the named profile; an
// unknown profile name is no profile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const base = '/v1/tenants/globex-eng';
const coder = { subject: 'agent:coding-bot', groups: ['coding'], facts: { hostSession: 'ready' } };
type Answer = { json: { tools: { id: string }[]; filtered: { id: string; reason: string }[] } };
const visible = (r: Answer) => r.json.tools.map((x) => x.id);
const reason = (r: Answer, id: string) => r.json.filtered.find((f) => f.id === id)?.reason;

describe('profiles through the API', () => {
  it('R6.12 shows a profile-scoped tool only under a profile that enables it', async () => {
    const none = await t.request('POST', `${base}/simulate`, { body: coder });
    expect(none.status).toBe(200);
    expect(reason(none, 'core__host_fs_apply_patch')).toBe('profile');
    expect(reason(none, 'core__host_fs_edit_file')).toBe('profile');
    expect(visible(none)).toContain('core__host_fs_read_file');

    const openai = await t.request('POST', `${base}/simulate`, { body: { ...coder, profile: 'openai' } });
    expect(visible(openai)).toContain('core__host_fs_apply_patch');
    expect(reason(openai, 'core__host_fs_edit_file')).toBe('profile');

    const unknown = await t.request('POST', `${base}/simulate`, { body: { ...coder, profile: 'mistral' } });
    expect(unknown.json.tools).toEqual(none.json.tools);
    expect(unknown.json.filtered).toEqual(none.json.filtered);
  });

  it('R6.12 hides a disabled tool under the profile that disables it and nowhere else, once saved', async () => {
    const saved = await t.request('GET', `${base}/policy`);
    const { version, ...policy } = saved.json;
    policy.profiles.openai.disable.push('core__host_fs_grep');
    const put = await t.request('PUT', `${base}/policy`, { body: policy, headers: { 'if-match': `"${version}"` } });
    expect(put.status).toBe(200);
    expect(reason(await t.request('POST', `${base}/simulate`, { body: { ...coder, profile: 'openai' } }), 'core__host_fs_grep')).toBe('profile');
    expect(visible(await t.request('POST', `${base}/simulate`, { body: { ...coder, profile: 'anthropic' } }))).toContain('core__host_fs_grep');
    expect(visible(await t.request('POST', `${base}/simulate`, { body: coder }))).toContain('core__host_fs_grep');
  });

  it('R6.12 publishes the profiles a runtime derives the profile-scoped tools from (R2.4)', async () => {
    const pub = await t.request('POST', `${base}/bundles`, { body: { reason: 'profiles' } });
    expect([200, 201]).toContain(pub.status);
    const latest = await t.request('GET', `${base}/bundles/latest`);
    expect(latest.json.index).toBeUndefined();
    const loaded = loadBundle(latest.json);
    expect(loaded.tools.filter((x) => loaded.profileScoped[x.pos] === 1).map((x) => x.id)).toEqual(['core__host_fs_apply_patch', 'core__host_fs_edit_file']);
  });
});
