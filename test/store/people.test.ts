import { describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { createAccount, createSite, openTestStore, useTestStore } from './helpers.js';

/** Records the account app keeps: API tokens, invites by token, claims, sessions, sign-ins, reports. */

const HOUR_MS = 3600_000;
const t = useTestStore('people');
let counter = 0;

const unique = (prefix: string): string => `${prefix}-${++counter}`;

describe('API tokens', () => {
  it('lists, touches and revokes an account’s tokens; a revoked token is gone at once', async () => {
    const account = await createAccount(t.store, `${unique('tok')}@example.com`);
    const first = await t.store.addApiToken({ accountId: account.id, tokenHash: hashToken('pl_one'), name: 'laptop' });
    t.clock.now += 1000;
    const second = await t.store.addApiToken({ accountId: account.id, tokenHash: hashToken('pl_two'), name: 'CI' });
    expect(first.id).toMatch(/^tok_[a-z2-7]{26}$/);
    expect(t.store.listApiTokens(account.id).map((token) => token.name)).toEqual(['laptop', 'CI']);

    await t.store.touchApiToken(hashToken('pl_two'), t.clock.now + 5);
    expect(t.store.listApiTokens(account.id)[1]).toMatchObject({ id: second.id, lastUsedAt: t.clock.now + 5 });

    expect(await t.store.revokeApiToken(account.id, first.id)).toBe(true);
    expect(t.store.findToken(hashToken('pl_one'))).toBeUndefined();
    expect(t.store.listApiTokens(account.id).map((token) => token.id)).toEqual([second.id]);
    expect(await t.store.revokeApiToken(account.id, first.id)).toBe(false);
  });

  it('never revokes another account’s token', async () => {
    const owner = await createAccount(t.store, `${unique('own')}@example.com`);
    const other = await createAccount(t.store, `${unique('oth')}@example.com`);
    const token = await t.store.addApiToken({ accountId: owner.id, tokenHash: hashToken(unique('pl_x')), name: 'x' });
    expect(await t.store.revokeApiToken(other.id, token.id)).toBe(false);
    expect(t.store.listApiTokens(owner.id)).toHaveLength(1);
  });
});

describe('invites', () => {
  async function siteWithInvite(email: string, role: 'editor' | 'viewer' = 'editor') {
    const owner = await createAccount(t.store, `${unique('owner')}@example.com`);
    const { site } = await createSite(t.store, unique('inv-site'), { accountId: owner.id });
    const token = unique('inv_token');
    await t.store.createInvite({ siteId: site.id, email, role, tokenHash: hashToken(token), invitedBy: owner.id, expiresAt: t.clock.now + HOUR_MS });
    return { site, token, owner };
  }

  it('accepts for the invited address only, once', async () => {
    const email = `${unique('guest')}@example.com`;
    const { site, token } = await siteWithInvite(email);
    const intruder = await createAccount(t.store, `${unique('intruder')}@example.com`);
    expect(await t.store.acceptInvite(hashToken(token), intruder.id)).toEqual({ ok: false, reason: 'wrong_account' });
    const guest = await createAccount(t.store, email.toUpperCase());
    const accepted = await t.store.acceptInvite(hashToken(token), guest.id);
    expect(accepted).toMatchObject({ ok: true, role: 'editor' });
    expect(t.store.getRole(site.id, guest.id)).toBe('editor');
    expect(t.store.listInvites(site.id)).toEqual([]);
    expect(await t.store.acceptInvite(hashToken(token), guest.id)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('replacing an invite retires the old link', async () => {
    const email = `${unique('again')}@example.com`;
    const { site, token, owner } = await siteWithInvite(email);
    await t.store.createInvite({
      siteId: site.id,
      email,
      role: 'viewer',
      tokenHash: hashToken('inv_new'),
      invitedBy: owner.id,
      expiresAt: t.clock.now + HOUR_MS,
    });
    expect(t.store.getInviteByToken(hashToken(token))).toBeUndefined();
    expect(t.store.getInviteByToken(hashToken('inv_new'))).toMatchObject({ email, role: 'viewer' });
  });

  it('an expired invite cannot be read or accepted', async () => {
    const email = `${unique('late')}@example.com`;
    const { token } = await siteWithInvite(email);
    const guest = await createAccount(t.store, email);
    t.clock.now += HOUR_MS;
    expect(t.store.getInviteByToken(hashToken(token))).toBeUndefined();
    expect(await t.store.acceptInvite(hashToken(token), guest.id)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('removing a member also drops a pending invite for their address', async () => {
    const email = `${unique('both')}@example.com`;
    const { site, owner } = await siteWithInvite(email, 'viewer');
    const person = await createAccount(t.store, email);
    await t.store.setMember(site.id, person.id, 'editor');
    expect(t.store.listInvites(site.id)).toHaveLength(1);
    expect(await t.store.removeMember(site.id, person.id)).toBe('removed');
    expect(t.store.listInvites(site.id)).toEqual([]);
    expect(t.store.getRole(site.id, owner.id)).toBe('owner');
  });

  it('accepting never demotes an existing member', async () => {
    const email = `${unique('boss')}@example.com`;
    const { site, token } = await siteWithInvite(email, 'viewer');
    const person = await createAccount(t.store, email);
    await t.store.setMember(site.id, person.id, 'owner');
    expect(await t.store.acceptInvite(hashToken(token), person.id)).toMatchObject({ ok: true, role: 'owner' });
  });
});

describe('claims', () => {
  async function anonymous() {
    const n = unique('anon');
    const { site } = await createSite(t.store, n, {
      plan: 'anonymous',
      claimed: false,
      expiresAt: t.clock.now + 72 * HOUR_MS,
      siteTokenHash: hashToken(`st_${n}`),
      claimTokenHash: hashToken(`ct_${n}`),
    });
    return { site, siteToken: `st_${n}`, claimToken: `ct_${n}` };
  }

  it('gives the site the account’s plan', async () => {
    const account = await createAccount(t.store, `${unique('builder')}@example.com`, 'builder');
    const { claimToken } = await anonymous();
    const result = await t.store.claimSite(hashToken(claimToken), account.id);
    expect(result).toMatchObject({ ok: true, site: { plan: 'builder', claimed: true } });
  });

  it('refuses over the account’s site limit and changes nothing', async () => {
    const account = await createAccount(t.store, `${unique('full')}@example.com`);
    const first = await anonymous();
    expect((await t.store.claimSite(hashToken(first.claimToken), account.id, { maxOwnedSites: 1 })).ok).toBe(true);
    const second = await anonymous();
    expect(await t.store.claimSite(hashToken(second.claimToken), account.id, { maxOwnedSites: 1 })).toEqual({ ok: false, reason: 'over_limit' });
    expect(t.store.getSite(second.site.name)).toMatchObject({ claimed: false, plan: 'anonymous' });
    expect(t.store.findToken(hashToken(second.claimToken))).toEqual({ kind: 'claim', siteId: second.site.id });
  });

  it('leaves a sealed account token for one claim poll and records the token', async () => {
    const account = await createAccount(t.store, `${unique('agent')}@example.com`);
    const { siteToken, claimToken } = await anonymous();
    const result = await t.store.claimSite(hashToken(claimToken), account.id, {
      accountToken: { tokenHash: hashToken('pl_agent'), name: 'Agent', sealed: 'sealed-value' },
    });
    expect(result).toMatchObject({ ok: true, tokenId: expect.stringMatching(/^tok_/) });
    expect(t.store.findToken(hashToken('pl_agent'))).toMatchObject({ kind: 'api', accountId: account.id, name: 'Agent' });
    expect(t.store.listApiTokens(account.id).map((token) => token.name)).toEqual(['Agent']);
    expect(await t.store.takeSealedAccountToken(hashToken(siteToken))).toBe('sealed-value');
    expect(await t.store.takeSealedAccountToken(hashToken(siteToken))).toBeUndefined();
  });
});

describe('sessions', () => {
  it('expire at read time and can be extended and deleted', async () => {
    const account = await createAccount(t.store, `${unique('ses')}@example.com`);
    await t.store.createSession('h1', { accountId: account.id, createdAt: t.clock.now, expiresAt: t.clock.now + 1000, csrfSecret: 's' });
    expect(t.store.getSession('h1')).toMatchObject({ accountId: account.id });
    await t.store.extendSession('h1', t.clock.now + 5000);
    t.clock.now += 2000;
    expect(t.store.getSession('h1')).toBeDefined();
    t.clock.now += 3000;
    expect(t.store.getSession('h1')).toBeUndefined();
    await t.store.createSession('h2', { accountId: account.id, createdAt: t.clock.now, expiresAt: t.clock.now + 1000, csrfSecret: 's' });
    await t.store.deleteSession('h2');
    expect(t.store.getSession('h2')).toBeUndefined();
  });
});

describe('sign-ins', () => {
  const LINK = hashToken('link-secret');
  const BROWSER = hashToken('browser-secret');
  const CODE = hashToken('123456');
  const base = () => ({
    email: 'x@example.com',
    linkHash: LINK,
    browserHash: BROWSER,
    codeHash: CODE,
    createdAt: t.clock.now,
    expiresAt: t.clock.now + 15 * 60_000,
    attempts: 0,
  });
  const byLink = (secretHash = LINK) => ({ proof: { kind: 'link' as const, secretHash }, maxAttempts: 5 });
  const byBrowser = (codeHash: string, secretHash = BROWSER) => ({ proof: { kind: 'browser' as const, secretHash, codeHash }, maxAttempts: 5 });

  it.each([
    ['the link secret alone', byLink(), { ok: true }],
    ['the browser secret and the right code', byBrowser(CODE), { ok: true }],
    ['the browser secret and a wrong code', byBrowser(hashToken('000000')), { ok: false, reason: 'wrong_code', attemptsLeft: 4 }],
    ['the browser secret offered as the link secret', byLink(BROWSER), { ok: false, reason: 'not_found' }],
    ['the link secret offered as the browser secret', byBrowser(CODE, LINK), { ok: false, reason: 'not_found' }],
    ['the code hash offered as the link secret', byLink(CODE), { ok: false, reason: 'not_found' }],
    ['an unknown secret with the right code', byBrowser(CODE, hashToken('guess')), { ok: false, reason: 'not_found' }],
  ])('is used by %s', async (_label, check, expected) => {
    const id = unique('si');
    await t.store.createSignIn(id, base());
    expect(await t.store.useSignIn(id, check)).toMatchObject(expected);
  });

  it('does not count a wrong code sent with a wrong browser secret', async () => {
    const id = unique('si');
    await t.store.createSignIn(id, base());
    await t.store.useSignIn(id, byBrowser(hashToken('000000'), hashToken('guess')));
    expect(t.store.getSignIn(id)?.attempts).toBe(0);
  });

  it('works once, by either proof', async () => {
    const id = unique('si');
    await t.store.createSignIn(id, base());
    expect((await t.store.useSignIn(id, byLink())).ok).toBe(true);
    expect(await t.store.useSignIn(id, byLink())).toEqual({ ok: false, reason: 'used' });
    expect(await t.store.useSignIn(id, byBrowser(CODE))).toEqual({ ok: false, reason: 'used' });
  });

  it('locks after five wrong codes, even for the right code and for the link', async () => {
    const id = unique('si');
    await t.store.createSignIn(id, base());
    for (let i = 0; i < 4; i++) expect((await t.store.useSignIn(id, byBrowser('bad'))).ok).toBe(false);
    expect(await t.store.useSignIn(id, byBrowser('bad'))).toEqual({ ok: false, reason: 'locked' });
    expect(await t.store.useSignIn(id, byBrowser(CODE))).toEqual({ ok: false, reason: 'locked' });
    expect(await t.store.useSignIn(id, byLink())).toEqual({ ok: false, reason: 'locked' });
  });

  it('expires', async () => {
    const id = unique('si');
    await t.store.createSignIn(id, base());
    t.clock.now += 15 * 60_000;
    expect(await t.store.useSignIn(id, byLink())).toEqual({ ok: false, reason: 'expired' });
  });

  it('matches nothing for a record kept from before sign-ins had two secrets', async () => {
    const id = unique('si');
    const { linkHash: _l, browserHash: _b, ...old } = base();
    await t.store.createSignIn(id, old as ReturnType<typeof base>);
    expect(await t.store.useSignIn(id, byLink())).toEqual({ ok: false, reason: 'not_found' });
  });
});

describe('reports', () => {
  it('are stored, listed by status and resolved', async () => {
    const report = await t.store.createReport({ site: 'bad-site', reason: 'phishing', details: 'fake bank', network: '203.0.113.0/24' });
    expect(report).toMatchObject({ id: expect.stringMatching(/^rep_/), status: 'open' });
    expect(t.store.listReports({ status: 'open' }).map((r) => r.id)).toContain(report.id);
    const resolved = await t.store.resolveReport(report.id, 'taken down');
    expect(resolved).toMatchObject({ status: 'resolved', note: 'taken down' });
    expect(t.store.listReports({ status: 'open' }).map((r) => r.id)).not.toContain(report.id);
    expect(await t.store.resolveReport('rep_unknown')).toBeUndefined();
  });
});

describe('pruneExpired', () => {
  it('drops expired sessions, manifests and day-old sign-ins, and keeps the rest', async () => {
    const { store: s, clock, close } = await openTestStore('prune-expired');
    try {
      const at = clock.now;
      await s.createSession('old', { accountId: 'acct_x', createdAt: at, expiresAt: at + 10, csrfSecret: 's' });
      await s.createSession('new', { accountId: 'acct_x', createdAt: at, expiresAt: at + 10_000, csrfSecret: 's' });
      await s.putManifest('mf_old', {
        owner: 'account:x',
        mode: 'create',
        plan: 'free',
        files: [],
        skipped: [],
        known: {},
        missing: [],
        createdAt: at,
        expiresAt: at + 10,
      });
      await s.createSignIn('si_old', {
        email: 'a@example.com',
        linkHash: 'l',
        browserHash: 'b',
        codeHash: 'h',
        createdAt: at,
        expiresAt: at + 10,
        attempts: 0,
      });
      clock.now = at + 100;
      expect(await s.pruneExpired()).toBe(2);
      clock.now = at + 24 * 3600_000 + 100;
      expect(await s.pruneExpired()).toBe(2);
      expect(s.getSignIn('si_old')).toBeUndefined();
    } finally {
      await close();
    }
  });
});
