import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { hashToken, type Plan } from '../../src/store/index.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request } from '../helpers/http.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, unique, visit } from './api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** Site lifecycle over REST (SPEC 3, 4.3, 4.4, 8) on a real server whose clock the tests move. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let clock = Date.now();

const server = useTestServer({ PLINTH_SITES_LIMIT_FREE: '2', PLINTH_STREAM_THRESHOLD_KB: '16' }, { now: () => clock });

/** An anonymous site published through the real deploy endpoint, as an agent would. */
async function anonymousDeploy(html: string): Promise<{ name: string; siteToken: string; claimUrl: string; revision: string }> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: html, encoding: 'utf8' }] } });
  expect(res.status, res.text).toBe(201);
  return { name: res.json.site.name, siteToken: res.json.site_token, claimUrl: res.json.claim_url, revision: res.json.revision.id };
}

describe('claim', () => {
  it('reports the claim to the site token, which then can do nothing else', async () => {
    const site = await anonymousDeploy('<h1>claim me</h1>');
    const before = await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken });
    expect(before.status).toBe(200);
    expect(before.json).toEqual({
      name: site.name,
      url: `http://${site.name}.sites.localhost`,
      claimed: false,
      expires_at: new Date(clock + 72 * HOUR).toISOString(),
      plan: 'anonymous',
      role: 'owner',
      permissions: ['read', 'deploy', 'rollback', 'promote', 'delete_revision'],
      live_revision: { id: site.revision, number: 1, created_at: new Date(clock).toISOString(), created_by: 'anonymous' },
      badge: true,
    });

    const person = await accountWithToken(server.store, 'free');
    const claimToken = site.claimUrl.split('/claim/')[1]!;
    const claimed = await server.store.claimSite(hashToken(claimToken), person.account.id);
    expect(claimed.ok).toBe(true);
    expect(await server.store.claimSite(hashToken(claimToken), person.account.id)).toEqual({ ok: false, reason: 'not_found' });

    const poll = await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken });
    expect(poll.status).toBe(200);
    expect(poll.json).toEqual({ claimed: true, agent_message: expect.any(String) });
    expect(poll.json.agent_message).toContain(`http://${site.name}.sites.localhost has been claimed`);
    expect(poll.json.agent_message).toContain('"api_token" in place of "site_token"');
    expect(poll.json.agent_message).toContain('/tokens');
    for (const path of ['files', 'revisions', 'files/index.html']) {
      const res = await api(server, { path: `/v1/sites/${site.name}/${path}`, token: site.siteToken });
      expect(res.status, path).toBe(403);
    }
    const update = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: site.siteToken,
      body: { site: site.name, base_revision: site.revision, files: [{ path: 'index.html', content: 'x', encoding: 'utf8' }] },
    });
    expect(update.status).toBe(403);

    const mine = await api(server, { path: `/v1/sites/${site.name}`, token: person.token });
    expect(mine.json).toMatchObject({ name: site.name, claimed: true, plan: 'free', role: 'owner', badge: true });
    expect(mine.json.expires_at).toBeUndefined();
    const list = await api(server, { path: '/v1/sites', token: person.token });
    expect(list.json.sites.map((s: { name: string }) => s.name)).toEqual([site.name]);
  });
});

describe('history around a claim', () => {
  it('tells an unclaimed site that asks to roll back how to go back, and brings its earlier revisions back once claimed', async () => {
    const site = await anonymousDeploy('<h1>one</h1>');
    const update = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: site.siteToken,
      body: { site: site.name, base_revision: site.revision, files: [{ path: 'index.html', content: '<h1>two</h1>', encoding: 'utf8' }] },
    });
    expect(update.status).toBe(201);
    const early = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: site.siteToken, body: { revision: site.revision } });
    expect(early.status).toBe(404);
    expect(early.json.agent_message).toContain('an unclaimed site keeps only its live revision');
    expect(early.json.agent_message).toContain('deploy the earlier files again');
    expect(early.json.agent_message).toContain('claim the site soon with its claim link');
    expect(early.json.agent_message).toContain('Free 7 days');

    const person = await accountWithToken(server.store, 'free');
    expect((await server.store.claimSite(hashToken(site.claimUrl.split('/claim/')[1]!), person.account.id)).ok).toBe(true);
    const poll = await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken });
    expect(poll.json.agent_message).toContain(
      "Its earlier revisions that the periodic clean-up had not yet deleted are back within reach under the account's Free plan (7 days of history)",
    );
    expect(poll.json.agent_message).toContain(`GET /v1/sites/${site.name}/revisions`);
    const revisions = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: person.token });
    expect(revisions.json.revisions.map((r: { number: number }) => r.number)).toEqual([2, 1]);
    const back = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: person.token, body: { revision: site.revision } });
    expect(back.status).toBe(201);
    expect((await visit(server, site.name)).text).toContain('one');
  });
});

describe('expiry', () => {
  it('answers 410 gone on the API and the serving host once 72 hours have passed, and refuses a late claim', async () => {
    const site = await anonymousDeploy('<h1>short lived</h1>');
    clock += 72 * HOUR - 1;
    expect((await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken })).status).toBe(200);
    clock += 1;
    for (const path of ['', '/files', '/revisions', '/files/index.html']) {
      const res = await api(server, { path: `/v1/sites/${site.name}${path}`, token: site.siteToken });
      expect(res.status, path).toBe(410);
      expect(res.json.error.code).toBe('gone');
    }
    const rollback = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: site.siteToken, body: { revision: site.revision } });
    expect(rollback.status).toBe(410);
    expect((await visit(server, site.name)).status).toBe(410);
    const person = await accountWithToken(server.store, 'free');
    const claimToken = site.claimUrl.split('/claim/')[1]!;
    expect(await server.store.claimSite(hashToken(claimToken), person.account.id)).toEqual({ ok: false, reason: 'expired' });
  });
});

describe('rename', () => {
  it('renames, redirects the old address and never gives the old name out again', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>rename me</h1>', 'about.html': 'about' } });
    const newName = unique('my-new-name-');
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: newName } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.previous_name).toBe(site.name);
    expect(res.json.site).toMatchObject({ name: newName, url: `http://${newName}.sites.localhost`, role: 'owner' });
    expect(res.json.agent_message).toContain(`http://${newName}.sites.localhost`);

    const old = await visit(server, site.name, '/about');
    expect(old.status).toBe(301);
    expect(old.headers.location).toBe(`http://${newName}.sites.localhost/about`);
    expect((await visit(server, newName)).text).toContain('rename me');
    expect((await api(server, { path: `/v1/sites/${newName}`, token: owner.token })).json.name).toBe(newName);

    const other = await accountSite(server.store, owner);
    const taken = await api(server, { method: 'POST', path: `/v1/sites/${other.name}/rename`, token: owner.token, body: { name: site.name } });
    expect(taken.status).toBe(400);
    expect(taken.json.error.details).toEqual({ reason: 'name_taken' });
    const back = await api(server, { method: 'POST', path: `/v1/sites/${newName}/rename`, token: owner.token, body: { name: site.name } });
    expect(back.status).toBe(400);
    const current = await api(server, { method: 'POST', path: `/v1/sites/${other.name}/rename`, token: owner.token, body: { name: newName } });
    expect(current.status).toBe(400);
  });

  it("redirects the old name's preview addresses to the same revision's preview under the new name", async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>live</h1>' } });
    const draft = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody(
        [
          ['index.html', '<h1>draft</h1>'],
          ['about.html', 'draft about'],
        ],
        { site: site.name, base_revision: site.revision, publish: false },
      ),
    });
    expect(draft.status, draft.text).toBe(201);
    const newName = unique('previewed-');
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: newName } });
    expect(res.status, res.text).toBe(200);

    const old = await visit(server, `2--${site.name}`, '/about?x=1');
    expect(old.status).toBe(301);
    expect(old.headers.location).toBe(`http://2--${newName}.sites.localhost/about?x=1`);
    const oldFirst = await visit(server, `1--${site.name}`);
    expect(oldFirst.status).toBe(301);
    expect(oldFirst.headers.location).toBe(`http://1--${newName}.sites.localhost/`);
    // Where it leads is the draft itself; the old live address still leads to the new live one.
    expect((await visit(server, `2--${newName}`, '/about')).text).toBe('draft about');
    expect((await visit(server, site.name)).headers.location).toBe(`http://${newName}.sites.localhost/`);
  });

  it.each([
    ['too short', 'abc'],
    ['too long', 'a'.repeat(64)],
    ['upper case', 'My-Site'],
    ['an underscore', 'my_site'],
    ['a space', 'my site'],
    ['a leading hyphen', '-mysite'],
    ['a trailing hyphen', 'mysite-'],
    ['the random form', 'brave-otter-1234'],
    ['a reserved name', 'docs'],
    ['another reserved name', 'admin'],
    ['an IDNA-style label', 'xn--site'],
    ['a number instead of a string', 42],
  ])('refuses a name with %s (400)', async (_what, name) => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
    expect(server.store.getSite(site.name)?.name).toBe(site.name);
  });

  it('refuses a body that is not JSON, or none', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/rename`,
      token: owner.token,
      headers: { 'content-type': 'application/json' },
      raw: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('JSON');
    const empty = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token });
    expect(empty.status).toBe(400);
  });
});

describe('member removal in two steps', () => {
  it('removes a member only with the confirmation token, within 5 minutes', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const editor = await accountWithToken(server.store, 'free');
    const site = await accountSite(server.store, owner, [[editor, 'editor']]);
    const path = `/v1/sites/${site.name}/members/${encodeURIComponent(editor.account.email)}`;

    const first = await api(server, { method: 'DELETE', path, token: owner.token });
    expect(first.status).toBe(200);
    expect(first.json.confirm_token).toMatch(/^rm_/);
    expect(first.json.expires_at).toBe(new Date(clock + 5 * MINUTE).toISOString());
    expect(server.store.getRole(site.id, editor.account.id)).toBe('editor');

    const wrong = await api(server, { method: 'DELETE', path: `${path}?confirm=rm_wrong`, token: owner.token });
    expect(wrong.status).toBe(400);
    expect(server.store.getRole(site.id, editor.account.id)).toBe('editor');

    const done = await api(server, { method: 'DELETE', path: `${path}?confirm=${first.json.confirm_token}`, token: owner.token });
    expect(done.status).toBe(200);
    expect(done.json.removed).toBe(editor.account.email);
    expect(server.store.getRole(site.id, editor.account.id)).toBeUndefined();
    const members = await api(server, { path: `/v1/sites/${site.name}/members`, token: owner.token });
    expect(members.json.members).toEqual([{ email: owner.account.email, role: 'owner' }]);
    // The removed editor can no longer see the site.
    expect((await api(server, { path: `/v1/sites/${site.name}`, token: editor.token })).status).toBe(404);
  });

  it('refuses an expired confirmation token (400) and keeps the member', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const viewer = await accountWithToken(server.store, 'free');
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']]);
    const path = `/v1/sites/${site.name}/members/${encodeURIComponent(viewer.account.email)}`;
    const first = await api(server, { method: 'DELETE', path, token: owner.token });
    clock += 5 * MINUTE;
    const late = await api(server, { method: 'DELETE', path: `${path}?confirm=${first.json.confirm_token}`, token: owner.token });
    expect(late.status).toBe(400);
    expect(late.json.error.code).toBe('bad_request');
    expect(server.store.getRole(site.id, viewer.account.id)).toBe('viewer');
  });

  it('refuses a token made for another member', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const [a, b] = [await accountWithToken(server.store, 'free'), await accountWithToken(server.store, 'free')];
    const site = await accountSite(server.store, owner, [
      [a, 'viewer'],
      [b, 'viewer'],
    ]);
    const forA = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/members/${a.account.email}`, token: owner.token });
    const onB = await api(server, {
      method: 'DELETE',
      path: `/v1/sites/${site.name}/members/${b.account.email}?confirm=${forA.json.confirm_token}`,
      token: owner.token,
    });
    expect(onB.status).toBe(400);
    expect(server.store.getRole(site.id, b.account.id)).toBe('viewer');
  });

  it('never removes the last owner, but lets one of two owners go', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const site = await accountSite(server.store, owner);
    const self = `/v1/sites/${site.name}/members/${encodeURIComponent(owner.account.email)}`;
    const res = await api(server, { method: 'DELETE', path: self, token: owner.token });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('last owner');

    const second = await accountWithToken(server.store, 'free');
    await server.store.setMember(site.id, second.account.id, 'owner');
    const first = await api(server, { method: 'DELETE', path: self, token: owner.token });
    expect(first.status).toBe(200);
    const done = await api(server, { method: 'DELETE', path: `${self}?confirm=${first.json.confirm_token}`, token: owner.token });
    expect(done.status).toBe(200);
    expect((await api(server, { path: `/v1/sites/${site.name}/members`, token: second.token })).json.members).toEqual([
      { email: second.account.email, role: 'owner' },
    ]);
  });

  it('withdraws a pending invitation the same way, after which its link no longer works', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const site = await accountSite(server.store, owner);
    const email = `${unique('invitee')}@example.com`;
    const invited = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/members`, token: owner.token, body: { email, role: 'editor' } });
    expect(invited.status, invited.text).toBe(201);
    const message = readFileSync(
      join(
        server.dataDir,
        'outbox',
        readdirSync(join(server.dataDir, 'outbox')).find((name) => name.includes(email))!,
      ),
      'utf8',
    );
    const inviteToken = /\/invites\/(inv_[A-Za-z0-9_-]+)/.exec((await simpleParser(message)).text ?? '')![1]!;
    const invitePage = () => request({ port: server.port, host: 'app.localhost', path: `/invites/${inviteToken}` });
    expect((await invitePage()).status).toBe(200);

    const path = `/v1/sites/${site.name}/members/${encodeURIComponent(email)}`;
    const first = await api(server, { method: 'DELETE', path, token: owner.token });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({ confirm_token: expect.stringMatching(/^rm_/), expires_at: new Date(clock + 5 * MINUTE).toISOString() });
    expect(first.json.member).toEqual({ email, role: 'editor' });
    expect(first.json.agent_message).toContain(`?confirm=${first.json.confirm_token}`);
    // Nothing is withdrawn before the confirmation.
    expect((await invitePage()).status).toBe(200);
    expect((await api(server, { method: 'DELETE', path: `${path}?confirm=rm_wrong`, token: owner.token })).status).toBe(400);
    expect((await invitePage()).status).toBe(200);

    const done = await api(server, { method: 'DELETE', path: `${path}?confirm=${first.json.confirm_token}`, token: owner.token });
    expect(done.status, done.text).toBe(200);
    expect(done.json).toEqual({ removed: email, agent_message: expect.stringContaining(email) });
    expect((await invitePage()).status).toBe(404);
    expect(server.store.getInviteByToken(hashToken(inviteToken))).toBeUndefined();
    const members = await api(server, { path: `/v1/sites/${site.name}/members`, token: owner.token });
    expect(members.json.invites).toEqual([]);
    const events = await api(server, { path: `/v1/sites/${site.name}/events`, token: owner.token });
    expect(events.json.events[0]).toMatchObject({ kind: 'invite.revoked', actor: owner.account.email, details: { email } });
    // The token is used up, and the address is now neither member nor invited.
    expect((await api(server, { method: 'DELETE', path: `${path}?confirm=${first.json.confirm_token}`, token: owner.token })).status).toBe(404);
  });

  it('answers 404 for an address that is not a member', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/members/nobody@example.com`, token: owner.token });
    expect(res.status).toBe(404);
  });
});

describe('deletion approval', () => {
  it('deletes only after the approval, then answers 410 everywhere', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}`, token: owner.token });
    expect(res.status).toBe(202);
    const token: string = res.json.approval.token;
    expect(res.json.approve_url).toBe(`http://app.localhost/approve/${token}`);
    expect(res.json.approval).toEqual({ token, status: 'pending', expires_at: new Date(clock + DAY).toISOString() });
    expect(res.json.agent_message).toContain(res.json.approve_url);
    expect((await visit(server, site.name)).status).toBe(200);

    const pending = await api(server, { path: `/v1/approvals/${token}` });
    expect(pending.json).toMatchObject({ status: 'pending', site: { name: site.name, url: `http://${site.name}.sites.localhost` } });

    expect(await server.store.approveDeletion(hashToken(token), 'some-other-site')).toEqual({ ok: false, reason: 'wrong_address' });
    expect((await server.store.approveDeletion(hashToken(token), `https://${site.name}.sites.localhost/`)).ok).toBe(true);

    const approved = await api(server, { path: `/v1/approvals/${token}` });
    expect(approved.json).toMatchObject({ status: 'approved', site: { name: site.name }, deleted_at: new Date(clock).toISOString() });
    expect((await visit(server, site.name)).status).toBe(410);
    const gone = await api(server, { path: `/v1/sites/${site.name}`, token: owner.token });
    expect(gone.status).toBe(410);
    expect(gone.json.error.code).toBe('gone');
    expect((await api(server, { path: '/v1/sites', token: owner.token })).json.sites).toEqual([]);
  });

  it('reports an approval nobody confirmed within 24 hours as expired', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}`, token: owner.token });
    clock += DAY;
    expect((await api(server, { path: `/v1/approvals/${res.json.approval.token}` })).json.status).toBe('expired');
    expect(await server.store.approveDeletion(hashToken(res.json.approval.token), site.name)).toEqual({ ok: false, reason: 'expired' });
    expect((await visit(server, site.name)).status).toBe(200);
  });

  it('answers 404 for an unknown approval token', async () => {
    const res = await api(server, { path: '/v1/approvals/ap_unknown' });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
  });
});

describe('rollback', () => {
  it('publishes the chosen content as a new revision with the next number', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>', 'a.txt': 'a' } });
    await commitFiles(server.store, site.name, { 'index.html': '<h1>two</h1>' });
    await commitFiles(server.store, site.name, { 'index.html': '<h1>three</h1>', 'c.txt': 'c' });
    expect((await visit(server, site.name)).text).toContain('three');

    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: site.revision } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.revision).toMatchObject({ number: 4, kind: 'rollback', rollback_of: site.revision, files: 2, created_by: owner.account.email });
    expect(res.json.site.live_revision).toMatchObject({ id: res.json.revision.id, number: 4 });
    expect((await visit(server, site.name)).text).toContain('<h1>one</h1>');
    const files = await api(server, { path: `/v1/sites/${site.name}/files`, token: owner.token });
    expect(files.json.revision).toBe(res.json.revision.id);
    expect(files.json.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'index.html']);

    const list = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(list.json.revisions.map((r: { number: number; kind: string }) => [r.number, r.kind])).toEqual([
      [4, 'rollback'],
      [3, 'deploy'],
      [2, 'deploy'],
      [1, 'deploy'],
    ]);
    expect(list.json.next_cursor).toBeNull();
  });

  it.each([
    ['an unknown revision', async () => 'rev_doesnotexist'],
    ["another site's revision", async () => (await accountSite(server.store, await accountWithToken(server.store))).revision],
  ])('answers 404 for %s', async (_what, pick) => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: await pick() } });
    expect(res.status).toBe(404);
    expect(server.store.getSite(site.name)?.liveNumber).toBe(1);
  });

  it('refuses a body without a revision (400)', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: {} });
    expect(res.status).toBe(400);
  });

  it('lets a site token roll back its unclaimed site to the live revision, which changes nothing', async () => {
    const anon = await anonymousSite(server.store, clock + 72 * HOUR);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${anon.name}/rollback`, token: anon.siteToken, body: { revision: anon.revision } });
    // What is live already: no copy of it is made (docs/sites-api.md, "Roll back").
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ unchanged: true, revision: { id: anon.revision, number: 1 } });
  });
});

describe('history reach', () => {
  it.each([
    ['free', 6, true],
    ['free', 8, false],
    ['prompter', 89, true],
    ['prompter', 91, false],
    ['builder', 364, true],
    ['builder', 366, false],
    ['team', 364, true],
    ['team', 366, false],
    ['company', 729, true],
    ['company', 731, false],
  ] as const)('lists and rolls back to a %s revision %i days old: %s', async (plan, days, visible) => {
    const owner = await accountWithToken(server.store, plan);
    const site = await accountSite(server.store, owner, [], { plan: plan as Plan });
    clock += days * DAY;
    const live = await commitFiles(server.store, site.name, { 'index.html': 'newer' });
    const list = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(list.json.revisions.map((r: { id: string }) => r.id)).toEqual(visible ? [live.id, site.revision] : [live.id]);
    const rollback = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: site.revision } });
    expect(rollback.status).toBe(visible ? 201 : 404);
  });

  it('shows an unclaimed site only its live revision', async () => {
    const anon = await anonymousSite(server.store, clock + 72 * HOUR);
    const live = await commitFiles(server.store, anon.name, { 'index.html': 'second' }, 'site_token');
    const list = await api(server, { path: `/v1/sites/${anon.name}/revisions`, token: anon.siteToken });
    expect(list.json.revisions).toHaveLength(1);
    expect(list.json.revisions[0]).toMatchObject({ id: live.id, number: 2, kind: 'deploy', files: 1, bytes: 6, created_by: 'site_token' });
    const rollback = await api(server, { method: 'POST', path: `/v1/sites/${anon.name}/rollback`, token: anon.siteToken, body: { revision: anon.revision } });
    expect(rollback.status).toBe(404);
  });

  it('always lists the live revision, however old', async () => {
    const owner = await accountWithToken(server.store, 'free');
    const site = await accountSite(server.store, owner);
    clock += 30 * DAY;
    const list = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(list.json.revisions.map((r: { id: string }) => r.id)).toEqual([site.revision]);
  });

  it('pages newest first with next_cursor', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    for (let i = 2; i <= 5; i++) await commitFiles(server.store, site.name, { 'index.html': `v${i}` });
    const numbers: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await api(server, { path: `/v1/sites/${site.name}/revisions${query}`, token: owner.token });
      expect(page.status).toBe(200);
      numbers.push(...page.json.revisions.map((r: { number: number }) => r.number));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(numbers).toEqual([5, 4, 3, 2, 1]);
    expect((await api(server, { path: `/v1/sites/${site.name}/revisions?cursor=!!`, token: owner.token })).status).toBe(400);
    expect((await api(server, { path: `/v1/sites/${site.name}/revisions?limit=0`, token: owner.token })).status).toBe(400);
  });
});

describe('invites', () => {
  it('stores the invite and writes the e-mail with the accept link to the outbox', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const site = await accountSite(server.store, owner);
    const email = `${unique('friend')}@example.com`;
    const res = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/members`,
      token: owner.token,
      body: { email: email.toUpperCase(), role: 'editor' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.invite).toEqual({ email, role: 'editor', expires_at: new Date(clock + 7 * DAY).toISOString() });

    const outbox = join(server.dataDir, 'outbox');
    const file = readdirSync(outbox).find((name) => name.includes(email));
    expect(file).toMatch(/\.eml$/);
    const message = readFileSync(join(outbox, file!), 'utf8');
    expect(message).toContain(`To: ${email}`);
    expect(message).toMatch(/Subject: .*invited/);
    expect(message).toContain(`http://${site.name}.sites.localhost`);
    expect(message).toContain(owner.account.email);
    // The link as a mail client reads it: quoted-printable may break a long line inside it.
    const text = (await simpleParser(message)).text ?? '';
    const link = /http:\/\/app\.localhost\/invites\/(inv_[A-Za-z0-9_-]+)/.exec(text);
    expect(link).not.toBeNull();
    // Only the hash of the invite token is stored.
    const [invite] = server.store.listInvites(site.id);
    expect(invite!.tokenHash).toBe(hashToken(link![1]!));

    const members = await api(server, { path: `/v1/sites/${site.name}/members`, token: owner.token });
    expect(members.json).toEqual({
      members: [{ email: owner.account.email, role: 'owner' }],
      invites: [{ email, role: 'editor', expires_at: res.json.invite.expires_at }],
    });
  });

  it.each([
    ['an owner role', { email: 'x@example.com', role: 'owner' }],
    ['no role', { email: 'x@example.com' }],
    ['a bad address', { email: 'not-an-address', role: 'viewer' }],
    ['a header injection', { email: 'x@example.com\r\nBcc: y@example.com', role: 'viewer' }],
    ['an array body', ['x@example.com']],
  ])('refuses an invite with %s (400)', async (_what, body) => {
    const owner = await accountWithToken(server.store, 'team');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/members`, token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
  });

  it('refuses to invite someone who is already a member', async () => {
    const owner = await accountWithToken(server.store, 'team');
    const viewer = await accountWithToken(server.store, 'free');
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']]);
    const res = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/members`,
      token: owner.token,
      body: { email: viewer.account.email, role: 'editor' },
    });
    expect(res.status).toBe(400);
  });
});

describe('account', () => {
  it('counts owned sites against the plan and refuses a create over the limit (429)', async () => {
    const person = await accountWithToken(server.store, 'free');
    const other = await accountWithToken(server.store, 'builder');
    // A site where the person is only an editor does not count.
    await accountSite(server.store, other, [[person, 'editor']]);
    expect((await api(server, { path: '/v1/me', token: person.token })).json).toEqual({
      email: person.account.email,
      plan: 'free',
      sites_used: 0,
      sites_limit: 2,
    });
    const files = [{ path: 'index.html', content: 'mine', encoding: 'utf8' }];
    for (let i = 0; i < 2; i++) {
      expect((await api(server, { method: 'POST', path: '/v1/deploy', token: person.token, body: { files } })).status).toBe(201);
    }
    const over = await api(server, { method: 'POST', path: '/v1/deploy', token: person.token, body: { files } });
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('limit');
    expect(over.json.agent_message).toContain('2');
    expect((await api(server, { path: '/v1/me', token: person.token })).json).toMatchObject({ sites_used: 2, sites_limit: 2 });
  });

  it('lets only as many racing creates through as the plan has sites left', async () => {
    const person = await accountWithToken(server.store, 'free');
    // Archives are admitted before their body is read, so all six pass the early count.
    const archive = tgzBytes([['index.html', 'race']]);
    const answers = await Promise.all(Array.from({ length: 6 }, () => deployTo(server.port, { body: archive, token: person.token })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429, 429, 429, 429]);
    expect((await api(server, { path: '/v1/me', token: person.token })).json).toMatchObject({ sites_used: 2, sites_limit: 2 });
  });

  it('lists the sites of the caller with their roles, a page at a time', async () => {
    const person = await accountWithToken(server.store, 'builder');
    const other = await accountWithToken(server.store, 'builder');
    const own = await accountSite(server.store, person);
    const shared = await accountSite(server.store, other, [[person, 'viewer']]);
    await accountSite(server.store, other);
    const seen = new Map<string, string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { json: { sites: Array<{ name: string; role: string; badge: boolean }>; next_cursor: string | null } } = await api(server, {
        path: `/v1/sites?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        token: person.token,
      });
      for (const s of page.json.sites) seen.set(s.name, s.role);
      cursor = page.json.next_cursor;
      pages++;
    } while (cursor);
    expect(Object.fromEntries(seen)).toEqual({ [own.name]: 'owner', [shared.name]: 'viewer' });
    expect(pages).toBeGreaterThanOrEqual(2);
  });
});

describe('files', () => {
  it('lists the live files in path order and returns each one raw with X-Revision', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const big = Buffer.alloc(100 * 1024, 7);
    const site = await accountSite(server.store, owner, [], {
      files: { 'index.html': '<h1>files</h1>', 'css/site.css': 'body{}', 'img/big.bin': big, 'docs/a b.txt': 'spaced' },
    });
    const list = await api(server, { path: `/v1/sites/${site.name}/files`, token: owner.token });
    expect(list.json.revision).toBe(site.revision);
    expect(list.json.files.map((f: { path: string }) => f.path)).toEqual(['css/site.css', 'docs/a b.txt', 'img/big.bin', 'index.html']);
    expect(list.json.files[0]).toEqual({ path: 'css/site.css', size: 6, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const css = await api(server, { path: `/v1/sites/${site.name}/files/css/site.css`, token: owner.token });
    expect(css.status).toBe(200);
    expect(css.text).toBe('body{}');
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(css.headers['x-revision']).toBe(site.revision);
    expect((await api(server, { path: `/v1/sites/${site.name}/files/docs/a%20b.txt`, token: owner.token })).text).toBe('spaced');
    // Larger than the stream threshold (16 KB here): streamed from disk.
    const streamed = await api(server, { path: `/v1/sites/${site.name}/files/img/big.bin`, token: owner.token });
    expect(streamed.status).toBe(200);
    expect(streamed.body.equals(big)).toBe(true);
    expect(streamed.headers['x-revision']).toBe(site.revision);

    const missing = await api(server, { path: `/v1/sites/${site.name}/files/nope.txt`, token: owner.token });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
  });
});

describe('taken down', () => {
  it('lets members read a site taken down for abuse, but not change or rename it', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    await server.store.setSiteState(site.name, 'taken_down');
    expect((await visit(server, site.name)).status).toBe(451);
    expect((await api(server, { path: `/v1/sites/${site.name}`, token: owner.token })).status).toBe(200);
    expect((await api(server, { path: `/v1/sites/${site.name}/files`, token: owner.token })).status).toBe(200);
    const rollback = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: site.revision } });
    expect(rollback.status).toBe(403);
    const rename = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: unique('escape-') } });
    expect(rename.status).toBe(403);
    expect(server.store.getSite(site.name)?.liveNumber).toBe(1);
  });
});

describe('request bodies', () => {
  it('refuses a JSON body over 64 KB with 413', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const res = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: 'x'.repeat(70 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('too_large');
  });
});
