import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MANIFEST_LIFETIME_MS } from '../../src/sites/index.js';
import { hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, api, type ApiResponse, type TestAccount } from '../api/api-helpers.js';
import { countMailTo, linkIn, mailTo } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import type { TestResponse } from '../helpers/http.js';
import { rpc } from '../mcp/mcp-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Replays of every single-use secret other than sign-in links and OAuth codes and tokens (their
 * own files cover those): claim links and the account token the claim poll hands out once,
 * invitations, deletion approvals, member-removal confirmations, and deploy manifests. Each row
 * uses the secret once as intended, then again as an attacker would (twice, late, by someone
 * else, for something else, or at the same moment), and checks the answer and the state after:
 * who owns the site, who is a member, whether it is live, how many revisions and sites exist.
 *
 * Claims, invitations and approvals happen on app pages (forms with CSRF tokens), driven over
 * plain HTTP as a browser would; the rest over the REST API. The server's clock is this file's.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let clock = Date.now();

const server = useAppServer({}, { now: () => clock });

// ---------------------------------------------------------------------------------------------
// People, sites and what the store says about them.

/** An account with an API token and a browser signed in to the app as it. */
async function person(): Promise<TestAccount & { browser: AppClient }> {
  const account = await accountWithToken(server.store, 'builder');
  const browser = new AppClient(server);
  await browser.signIn(account.account.email);
  return { ...account, browser };
}

/** A form post from a signed-in browser, with the form token every page carries. */
async function submit(browser: AppClient, path: string, fields: Record<string, string> = {}): Promise<TestResponse> {
  return browser.post(path, { ...fields, csrf: await browser.formToken('/') });
}

const siteNamed = (name: string) => server.store.getSite(name)!;
const membersOf = (name: string): string[] =>
  server.store
    .listMembers(siteNamed(name).id)
    .map((m) => `${m.email} ${m.role}`)
    .sort();
const invitesOf = (name: string): string[] => server.store.listInvites(siteNamed(name).id).map((i) => `${i.email} ${i.role}`);
const revisionsOf = (name: string): number => server.store.listRevisions(siteNamed(name).id, { limit: 200 }).revisions.length;

async function anonymousDeploy(): Promise<{ name: string; siteToken: string; claimPath: string; revision: string }> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>anonymous</h1>' }] } });
  expect(res.status, res.text).toBe(201);
  return { name: res.json.site.name, siteToken: res.json.site_token, claimPath: new URL(res.json.claim_url).pathname, revision: res.json.revision.id };
}

// ---------------------------------------------------------------------------------------------

describe('claim links', () => {
  it('claimed twice by the same person: 404, and the site is claimed once', async () => {
    const site = await anonymousDeploy();
    const alice = await person();
    const first = await submit(alice.browser, site.claimPath);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe(`/sites/${site.name}`);
    const again = await submit(alice.browser, site.claimPath);
    expect(again.status).toBe(404);
    expect(again.text).toContain('This claim link does not work');
    expect(siteNamed(site.name)).toMatchObject({ claimed: true, accountId: alice.account.id });
    expect(membersOf(site.name)).toEqual([`${alice.account.email} owner`]);
  });

  it('claimed by a second account: 404, and the site stays the first claimer’s', async () => {
    const site = await anonymousDeploy();
    const alice = await person();
    const mallory = await person();
    expect((await submit(alice.browser, site.claimPath)).status).toBe(303);
    const stolen = await submit(mallory.browser, site.claimPath);
    expect(stolen.status).toBe(404);
    expect((await mallory.browser.get(site.claimPath)).status).toBe(404);
    expect(siteNamed(site.name)).toMatchObject({ claimed: true, accountId: alice.account.id });
    expect(membersOf(site.name)).toEqual([`${alice.account.email} owner`]);
    expect(server.store.countOwnedSites(mallory.account.id)).toBe(0);
  });

  it('claimed by two accounts at the same moment: one wins, the other gets 404', async () => {
    const site = await anonymousDeploy();
    const [alice, bob] = await Promise.all([person(), person()]);
    const [a, b] = await Promise.all([alice, bob].map(async (p) => p.browser.post(site.claimPath, { csrf: await p.browser.formToken('/') })));
    expect([a!.status, b!.status].sort()).toEqual([303, 404]);
    const winner = a!.status === 303 ? alice : bob;
    expect(siteNamed(site.name).accountId).toBe(winner.account.id);
    expect(membersOf(site.name)).toEqual([`${winner.account.email} owner`]);
  });

  it('claimed after the site expired: 410, and nothing is claimed', async () => {
    const site = await anonymousDeploy();
    const alice = await person();
    clock += 72 * HOUR + 1;
    const late = await submit(alice.browser, site.claimPath);
    expect(late.status).toBe(410);
    expect(late.text).toContain('This site has expired');
    expect(siteNamed(site.name).claimed).toBe(false);
    expect(siteNamed(site.name).accountId).toBeUndefined();
    expect(membersOf(site.name)).toEqual([]);
    expect(server.store.countOwnedSites(alice.account.id)).toBe(0);
  });

  it('the account token for the agent reaches the claim poll once, however often it polls', async () => {
    const site = await anonymousDeploy();
    const alice = await person();
    expect((await submit(alice.browser, site.claimPath, { agent_token: 'yes' })).status).toBe(303);
    const polls = await Promise.all([1, 2, 3].map(() => api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken })));
    const handed = polls.filter((poll) => poll.json.account_token !== undefined);
    expect(handed).toHaveLength(1);
    for (const poll of polls) expect(poll.status).toBe(200);
    expect((await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken })).json).toEqual({ claimed: true, agent_message: expect.any(String) });
    // The token handed out is the claimer's, and only one was made.
    expect((await api(server, { path: '/v1/me', token: handed[0]!.json.account_token })).json.email).toBe(alice.account.email);
    expect(server.store.listApiTokens(alice.account.id).filter((t) => t.name.startsWith('Agent that published'))).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------

/** An owner's site and an invitation to `invitee` as editor; returns the accept page's path. */
async function invitation(invitee: TestAccount): Promise<{ owner: Awaited<ReturnType<typeof person>>; name: string; path: string }> {
  const owner = await person();
  const site = await accountSite(server.store, owner);
  const before = countMailTo(server, invitee.account.email);
  const res = await api(server, {
    method: 'POST',
    path: `/v1/sites/${site.name}/members`,
    token: owner.token,
    body: { email: invitee.account.email, role: 'editor' },
  });
  expect(res.status, res.text).toBe(201);
  const link = linkIn(await mailTo(server, invitee.account.email, { after: before }), `${server.appUrl}/invites/`);
  return { owner, name: site.name, path: new URL(link).pathname };
}

describe('invitations', () => {
  it('accepted twice: 404, and one membership', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(303);
    const again = await submit(bob.browser, `${path}/accept`);
    expect(again.status).toBe(404);
    expect(again.text).toContain('This invitation does not work');
    expect(membersOf(name)).toEqual([`${bob.account.email} editor`, `${owner.account.email} owner`].sort());
    expect(invitesOf(name)).toEqual([]);
  });

  it('accepted twice at the same moment: one joins, the other gets 404', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    const csrf = await bob.browser.formToken('/');
    const answers = await Promise.all([bob.browser.post(`${path}/accept`, { csrf }), bob.browser.post(`${path}/accept`, { csrf })]);
    expect(answers.map((a) => a.status).sort()).toEqual([303, 404]);
    expect(membersOf(name)).toEqual([`${bob.account.email} editor`, `${owner.account.email} owner`].sort());
  });

  it('accepted by the wrong account: refused, and the invitation still waits for its address', async () => {
    const bob = await person();
    const mallory = await person();
    const { owner, name, path } = await invitation(bob);
    const stolen = await submit(mallory.browser, `${path}/accept`);
    expect(stolen.status).toBe(303);
    expect(stolen.headers.location).toBe(path);
    const page = await mallory.browser.get(path);
    expect(page.status).toBe(403);
    expect(page.text).toContain('This invitation is for someone else');
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
    expect(invitesOf(name)).toEqual([`${bob.account.email} editor`]);
    // Declining is the invitee's too.
    expect((await submit(mallory.browser, `${path}/decline`)).status).toBe(303);
    expect(invitesOf(name)).toEqual([`${bob.account.email} editor`]);
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(303);
    expect(membersOf(name)).toContain(`${bob.account.email} editor`);
  });

  it('accepted after the owner withdrew it: 404, and no membership', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    expect((await submit(owner.browser, `/sites/${name}/invites/revoke`, { email: bob.account.email })).status).toBe(303);
    const late = await submit(bob.browser, `${path}/accept`);
    expect(late.status).toBe(404);
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
    expect(invitesOf(name)).toEqual([]);
  });

  it('accepted through an old link after a new invitation replaced it: 404 for the old one only', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    const before = countMailTo(server, bob.account.email);
    await api(server, { method: 'POST', path: `/v1/sites/${name}/members`, token: owner.token, body: { email: bob.account.email, role: 'viewer' } });
    const fresh = new URL(linkIn(await mailTo(server, bob.account.email, { after: before }), `${server.appUrl}/invites/`)).pathname;
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(404);
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
    expect((await submit(bob.browser, `${fresh}/accept`)).status).toBe(303);
    expect(membersOf(name)).toContain(`${bob.account.email} viewer`);
  });

  it('declined, then accepted: 404, and no membership', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    expect((await submit(bob.browser, `${path}/decline`)).status).toBe(303);
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(404);
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
    expect(invitesOf(name)).toEqual([]);
  });

  it('accepted after 7 days: 404, and no membership', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    clock += 7 * DAY + 1;
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(404);
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
  });

  it('accepted after the site was deleted: 404, and no membership', async () => {
    const bob = await person();
    const { owner, name, path } = await invitation(bob);
    await server.store.setSiteState(name, 'deleted');
    expect((await submit(bob.browser, `${path}/accept`)).status).toBe(404);
    expect(membersOf(name)).toEqual([`${owner.account.email} owner`]);
  });
});

// ---------------------------------------------------------------------------------------------

/** A site of `owner` with members, and a deletion asked for over the API: the approval page's path. */
async function deletionRequest(
  owner: TestAccount,
  members: Array<[TestAccount, 'editor' | 'viewer' | 'owner']> = [],
): Promise<{ name: string; id: string; path: string; token: string }> {
  const site = await accountSite(server.store, owner, members);
  const res = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}`, token: owner.token });
  expect(res.status, res.text).toBe(202);
  return { name: site.name, id: site.id, path: new URL(res.json.approve_url).pathname, token: res.json.approval.token };
}

const addressOf = (name: string): string => `${name}.sites.localhost:${server.port}`;
const approvalOf = (token: string) => server.store.getConfirmation(hashToken(token));

describe('deletion approvals', () => {
  it('approved twice: the second answer reports the deletion, and the site was deleted once', async () => {
    const owner = await person();
    const request = await deletionRequest(owner);
    const first = await submit(owner.browser, request.path, { address: addressOf(request.name) });
    expect(first.status).toBe(303);
    const deleted = server.store.getSiteById(request.id)!;
    const decided = approvalOf(request.token);
    expect(deleted.state).toBe('deleted');
    clock += MINUTE;
    const again = await submit(owner.browser, request.path, { address: addressOf(request.name) });
    expect(again.status).toBe(200);
    expect(again.text).toContain('was deleted');
    expect(server.store.getSiteById(request.id)).toEqual(deleted);
    expect(approvalOf(request.token)).toEqual(decided);
    const reported = await api(server, { path: `/v1/approvals/${request.token}` });
    expect(reported.json).toMatchObject({ status: 'approved', deleted_at: new Date(deleted.stateChangedAt!).toISOString() });
  });

  it('approved by two owners at the same moment: one deletes, the other is told it is done', async () => {
    const owner = await person();
    const second = await person();
    const request = await deletionRequest(owner, [[second, 'owner']]);
    const answers = await Promise.all(
      [owner, second].map(async (p) => p.browser.post(request.path, { address: addressOf(request.name), csrf: await p.browser.formToken('/') })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 303]);
    expect(server.store.getSiteById(request.id)!.state).toBe('deleted');
  });

  it.each([
    ['an editor', 'editor'],
    ['a viewer', 'viewer'],
    ['a non-member', undefined],
  ] as const)('approved by %s: 403, and the site stays live', async (_who, role) => {
    const owner = await accountWithToken(server.store, 'builder');
    const intruder = await person();
    const request = await deletionRequest(owner, role ? [[intruder, role]] : []);
    const res = await submit(intruder.browser, request.path, { address: addressOf(request.name) });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Only an owner can approve this');
    expect(siteNamed(request.name).state).toBe('active');
    expect(approvalOf(request.token)).toMatchObject({ status: 'pending' });
  });

  it('approved after the site was renamed: its former address deletes nothing; its new one deletes that same site', async () => {
    const owner = await person();
    const request = await deletionRequest(owner);
    const renamed = `renamed-${Date.now().toString(36)}`;
    expect((await api(server, { method: 'POST', path: `/v1/sites/${request.name}/rename`, token: owner.token, body: { name: renamed } })).status).toBe(200);
    const former = await submit(owner.browser, request.path, { address: addressOf(request.name) });
    expect(former.status).toBe(400);
    expect(former.text).toContain(`That is not the address of ${renamed}`);
    expect(server.store.getSiteById(request.id)!.state).toBe('active');
    const current = await submit(owner.browser, request.path, { address: addressOf(renamed) });
    expect(current.status).toBe(303);
    expect(server.store.getSiteById(request.id)).toMatchObject({ name: renamed, state: 'deleted' });
  });

  it('approved after 24 hours: 410, and the site stays live', async () => {
    const owner = await person();
    const request = await deletionRequest(owner);
    clock += DAY + 1;
    const late = await submit(owner.browser, request.path, { address: addressOf(request.name) });
    expect(late.status).toBe(410);
    expect(siteNamed(request.name).state).toBe('active');
    expect((await api(server, { path: `/v1/approvals/${request.token}` })).json.status).toBe('expired');
  });

  it('approved by an owner who was removed since: 403, and the site stays live', async () => {
    const first = await person();
    const second = await person();
    const request = await deletionRequest(first, [[second, 'owner']]);
    const step = await api(server, {
      method: 'DELETE',
      path: `/v1/sites/${request.name}/members/${encodeURIComponent(first.account.email)}`,
      token: second.token,
    });
    await api(server, {
      method: 'DELETE',
      path: `/v1/sites/${request.name}/members/${encodeURIComponent(first.account.email)}?confirm=${step.json.confirm_token}`,
      token: second.token,
    });
    expect(membersOf(request.name)).toEqual([`${second.account.email} owner`]);
    const res = await submit(first.browser, request.path, { address: addressOf(request.name) });
    expect(res.status).toBe(403);
    expect(siteNamed(request.name).state).toBe('active');
  });
});

// ---------------------------------------------------------------------------------------------

interface Team {
  name: string;
  owner: TestAccount;
  coOwner: TestAccount;
  editor: TestAccount;
  viewer: TestAccount;
}

async function team(): Promise<Team> {
  const [owner, coOwner, editor, viewer] = await Promise.all([0, 1, 2, 3].map(() => accountWithToken(server.store, 'builder')));
  const site = await accountSite(server.store, owner!, [
    [coOwner!, 'owner'],
    [editor!, 'editor'],
    [viewer!, 'viewer'],
  ]);
  return { name: site.name, owner: owner!, coOwner: coOwner!, editor: editor!, viewer: viewer! };
}

const removal = (name: string, member: TestAccount, token: string, confirm?: string): Promise<ApiResponse> =>
  api(server, {
    method: 'DELETE',
    path: `/v1/sites/${name}/members/${encodeURIComponent(member.account.email)}${confirm === undefined ? '' : `?confirm=${confirm}`}`,
    token,
  });

const isMember = (name: string, member: TestAccount): boolean => membersOf(name).some((m) => m.startsWith(`${member.account.email} `));

describe('member-removal confirmations', () => {
  it('used twice: the second is refused (400), and a member added back stays', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    expect((await removal(t.name, t.viewer, t.owner.token, confirm)).status).toBe(200);
    expect(isMember(t.name, t.viewer)).toBe(false);
    await server.store.setMember(siteNamed(t.name).id, t.viewer.account.id, 'viewer');
    const again = await removal(t.name, t.viewer, t.owner.token, confirm);
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('bad_request');
    expect(isMember(t.name, t.viewer)).toBe(true);
  });

  it('used twice at the same moment: one removes, the other finds nobody to remove', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    const answers = await Promise.all([removal(t.name, t.viewer, t.owner.token, confirm), removal(t.name, t.viewer, t.owner.token, confirm)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    expect(membersOf(t.name)).toHaveLength(3);
  });

  it('used 4 minutes 59 seconds later: removes', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    clock += 5 * MINUTE - 1000;
    expect((await removal(t.name, t.viewer, t.owner.token, confirm)).status).toBe(200);
    expect(isMember(t.name, t.viewer)).toBe(false);
  });

  it('used 5 minutes later: refused (400), and the member stays', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    clock += 5 * MINUTE;
    const late = await removal(t.name, t.viewer, t.owner.token, confirm);
    expect(late.status).toBe(400);
    expect(late.json.agent_message).toContain('without ?confirm');
    expect(isMember(t.name, t.viewer)).toBe(true);
  });

  it('used for another member: refused (400), and both stay', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    expect((await removal(t.name, t.editor, t.owner.token, confirm)).status).toBe(400);
    expect(isMember(t.name, t.editor)).toBe(true);
    expect(isMember(t.name, t.viewer)).toBe(true);
  });

  it('used on another site with the same member: refused (400), and the member stays on both', async () => {
    const t = await team();
    const other = await accountSite(server.store, t.owner, [[t.viewer, 'viewer']]);
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    expect((await removal(other.name, t.viewer, t.owner.token, confirm)).status).toBe(400);
    expect(isMember(other.name, t.viewer)).toBe(true);
    expect(isMember(t.name, t.viewer)).toBe(true);
  });

  it('used by another owner: refused (400), and it still works for the owner who asked', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    const other = await removal(t.name, t.viewer, t.coOwner.token, confirm);
    expect(other.status).toBe(400);
    expect(isMember(t.name, t.viewer)).toBe(true);
    expect((await removal(t.name, t.viewer, t.owner.token, confirm)).status).toBe(200);
    expect(isMember(t.name, t.viewer)).toBe(false);
  });

  it('used by the member it removes: 403, and the member stays', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.editor, t.owner.token)).json;
    expect((await removal(t.name, t.editor, t.editor.token, confirm)).status).toBe(403);
    expect(isMember(t.name, t.editor)).toBe(true);
  });

  it('used over REST, then replayed through MCP: refused, and a member added back stays', async () => {
    const t = await team();
    const { confirm_token: confirm } = (await removal(t.name, t.viewer, t.owner.token)).json;
    expect((await removal(t.name, t.viewer, t.owner.token, confirm)).status).toBe(200);
    await server.store.setMember(siteNamed(t.name).id, t.viewer.account.id, 'viewer');
    const replay = await rpc(server, {
      token: t.owner.token,
      headers: { 'mcp-protocol-version': '2025-11-25' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'remove_member', arguments: { site: t.name, email: t.viewer.account.email, confirm } },
      },
    });
    expect(replay.json.result.isError).toBe(true);
    expect(replay.json.result.content[0].text).toMatch(/^bad_request: /);
    expect(isMember(t.name, t.viewer)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Deploy manifests (src/sites/manifest.ts) are single-use: the upload that finishes one
// publishes once; any other finish answers 404.

const content = (marker: string): string => `<h1>${marker}</h1>`;
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const describeIndex = (marker: string) => [{ path: 'index.html', size: Buffer.byteLength(content(marker)), sha256: sha(content(marker)) }];

async function manifest(token: string | undefined, body: Record<string, unknown>): Promise<string> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy/manifest', token, body });
  expect(res.status, res.text).toBe(201);
  return res.json.manifest;
}

const finish = (id: string, token: string | undefined, marker: string): Promise<ApiResponse> =>
  api(server, { method: 'POST', path: `/v1/deploy?manifest=${id}`, token, body: { files: [{ path: 'index.html', content: content(marker) }] } });

/** Of racing finishes, one published; each other one lost the race (404) or came late and got its answer again. */
function expectOnePublished(answers: Array<{ status: number; headers: Record<string, unknown>; json: any }>): void {
  for (const answer of answers) expect([201, 404]).toContain(answer.status);
  const published = answers.filter((a) => a.status === 201);
  expect(published.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
  expect(new Set(published.map((a) => a.json.revision.id)).size).toBe(1);
}

describe('deploy manifests', () => {
  // A finish sent again gets the first one's answer (a lost answer is not a lost deploy), never a second revision.
  it('finished twice: the same answer again, and one revision', async () => {
    const t = await team();
    const site = siteNamed(t.name);
    const id = await manifest(t.owner.token, { site: t.name, base_revision: site.liveRevision, files: describeIndex('once') });
    const first = await finish(id, t.owner.token, 'once');
    expect(first.status).toBe(201);
    const again = await finish(id, t.owner.token, 'once');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.revision).toEqual(first.json.revision);
    expect(revisionsOf(t.name)).toBe(2);
  });

  it('finished twice at the same moment (an update): one publishes, the other gets 404 or its answer', async () => {
    const t = await team();
    const id = await manifest(t.owner.token, { site: t.name, base_revision: siteNamed(t.name).liveRevision, files: describeIndex('race') });
    const answers = await Promise.all([finish(id, t.owner.token, 'race'), finish(id, t.owner.token, 'race')]);
    expectOnePublished(answers);
    expect(revisionsOf(t.name)).toBe(2);
  });

  it('finished many times at the same moment (a new anonymous site): one site, the rest 404 or its answer', async () => {
    const sitesBefore = server.store.listSiteIds().length;
    const made = await api(server, { method: 'POST', path: '/v1/deploy/manifest', body: { files: describeIndex('anonymous race') } });
    expect(made.status, made.text).toBe(201);
    // The maker of an anonymous manifest sends its secret with every request for it.
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        api(server, {
          method: 'POST',
          path: `/v1/deploy?manifest=${made.json.manifest}`,
          headers: { 'x-manifest-secret': made.json.manifest_secret },
          body: { files: [{ path: 'index.html', content: content('anonymous race') }] },
        }),
      ),
    );
    expectOnePublished(answers);
    expect(new Set(answers.filter((a) => a.status === 201).map((a) => a.json.site_token)).size).toBe(1);
    expect(server.store.listSiteIds().length).toBe(sitesBefore + 1);
  });

  it('finished by another caller: 404, and it still works for its maker', async () => {
    const t = await team();
    const id = await manifest(t.owner.token, { site: t.name, base_revision: siteNamed(t.name).liveRevision, files: describeIndex('mine') });
    expect((await finish(id, t.coOwner.token, 'mine')).status).toBe(404);
    expect((await finish(id, undefined, 'mine')).status).toBe(404);
    expect(revisionsOf(t.name)).toBe(1);
    expect((await finish(id, t.owner.token, 'mine')).status).toBe(201);
  });

  it('finished after it expired (a day without a part): 404, and nothing published', async () => {
    const t = await team();
    const id = await manifest(t.owner.token, { site: t.name, base_revision: siteNamed(t.name).liveRevision, files: describeIndex('late') });
    clock += MANIFEST_LIFETIME_MS + 1;
    expect((await finish(id, t.owner.token, 'late')).status).toBe(404);
    expect(revisionsOf(t.name)).toBe(1);
  });

  it('finished by an editor who has since become a viewer: 403, and nothing published', async () => {
    const t = await team();
    const id = await manifest(t.editor.token, { site: t.name, base_revision: siteNamed(t.name).liveRevision, files: describeIndex('demoted') });
    await server.store.setMember(siteNamed(t.name).id, t.editor.account.id, 'viewer');
    const res = await finish(id, t.editor.token, 'demoted');
    expect(res.status).toBe(403);
    expect(revisionsOf(t.name)).toBe(1);
  });

  it('finished with a site token after the site was claimed: 403, and nothing published', async () => {
    const site = await anonymousDeploy();
    const id = await manifest(site.siteToken, { site: site.name, base_revision: site.revision, files: describeIndex('claimed') });
    const alice = await person();
    expect((await submit(alice.browser, site.claimPath)).status).toBe(303);
    const res = await finish(id, site.siteToken, 'claimed');
    expect(res.status).toBe(403);
    expect(revisionsOf(site.name)).toBe(1);
  });
});
