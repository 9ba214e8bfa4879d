import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, type AccountRecord, type Store } from '../../src/store/index.js';
import { createAccount, createSite, openTestStore, type TestStore } from './helpers.js';

const HOUR_MS = 3600_000;

let t: TestStore;
let store: Store;
let account: AccountRecord;
let counter = 0;

beforeAll(async () => {
  t = await openTestStore('claim');
  store = t.store;
  account = await createAccount(store, 'claimer@example.com');
});

afterAll(() => t.close());

/** An anonymous site as a deploy without credentials makes it: expiring, with both tokens. */
async function anonymousSite() {
  const n = ++counter;
  const siteToken = `st_test${n}`;
  const claimToken = `ct_test${n}`;
  const { site } = await createSite(store, `anon-site-${n}`, {
    plan: 'anonymous',
    claimed: false,
    expiresAt: t.clock.now + 72 * HOUR_MS,
    siteTokenHash: hashToken(siteToken),
    claimTokenHash: hashToken(claimToken),
  });
  return { site, siteTokenHash: hashToken(siteToken), claimTokenHash: hashToken(claimToken) };
}

describe('claimSite', () => {
  it('moves an anonymous site into the account: owner, Free, no expiry', async () => {
    const { site, siteTokenHash, claimTokenHash } = await anonymousSite();
    const heard: string[] = [];
    const stop = store.onSiteChanged(({ siteId }) => heard.push(siteId));

    const result = await store.claimSite(claimTokenHash, account.id);
    stop();

    expect(result.ok).toBe(true);
    const claimed = store.getSiteById(site.id)!;
    expect(result).toEqual({ ok: true, site: claimed });
    expect(claimed).toMatchObject({ claimed: true, accountId: account.id, plan: 'free', state: 'active', siteTokenHash });
    expect(claimed).not.toHaveProperty('expiresAt');
    expect(claimed).not.toHaveProperty('claimTokenHash');
    expect(claimed.liveRevision).toBe(site.liveRevision);
    expect(store.getRole(site.id, account.id)).toBe('owner');
    expect(store.listSitesOf(account.id).sites).toEqual([{ site: claimed, role: 'owner' }]);
    expect(store.countOwnedSites(account.id)).toBe(1);
    expect(heard).toEqual([site.id]);
  });

  it('uses the claim token up but keeps the site token (it may still read the claim)', async () => {
    const { site, siteTokenHash, claimTokenHash } = await anonymousSite();
    await store.claimSite(claimTokenHash, account.id);
    expect(store.findToken(claimTokenHash)).toBeUndefined();
    expect(store.findToken(siteTokenHash)).toEqual({ kind: 'site', siteId: site.id });
  });

  it('refuses a second claim with the same link: the token is gone', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const other = await createAccount(store, 'late@example.com');
    expect((await store.claimSite(claimTokenHash, account.id)).ok).toBe(true);
    expect(await store.claimSite(claimTokenHash, other.id)).toEqual({ ok: false, reason: 'not_found' });
    expect(store.getSiteById(site.id)?.accountId).toBe(account.id);
    expect(store.getRole(site.id, other.id)).toBeUndefined();
  });

  it('lets only one of two simultaneous claims win', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const other = await createAccount(store, 'racer@example.com');
    const results = await Promise.all([store.claimSite(claimTokenHash, account.id), store.claimSite(claimTokenHash, other.id)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(store.listMembers(site.id)).toHaveLength(1);
  });

  it('reports a site that is claimed already when its claim token still exists', async () => {
    const claimTokenHash = hashToken('ct_claimed-already');
    await createSite(store, 'claimed-already', { claimed: true, accountId: account.id, claimTokenHash });
    expect(await store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'already_claimed' });
  });

  it('refuses an expired site, from the moment of expiry, and changes nothing', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const saved = t.clock.now;
    t.clock.now = site.expiresAt!;
    try {
      expect(await store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'expired' });
      t.clock.now = site.expiresAt! + HOUR_MS;
      expect(await store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'expired' });
    } finally {
      t.clock.now = saved;
    }
    expect(store.getSiteById(site.id)).toEqual(site);
    expect(store.findToken(claimTokenHash)).toEqual({ kind: 'claim', siteId: site.id });
    expect(store.getRole(site.id, account.id)).toBeUndefined();
  });

  it('claims a site one millisecond before it expires', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const saved = t.clock.now;
    t.clock.now = site.expiresAt! - 1;
    try {
      expect((await store.claimSite(claimTokenHash, account.id)).ok).toBe(true);
    } finally {
      t.clock.now = saved;
    }
  });

  it.each([
    ['an unknown token', () => hashToken('ct_unknown')],
    ['a site token used as a claim token', () => hashToken(`st_test1`)],
    ['an API token used as a claim token', () => hashToken('pl_api')],
  ])('answers not_found for %s', async (_, tokenHash) => {
    await store.addApiToken({ accountId: account.id, tokenHash: hashToken('pl_api'), name: 'ci' });
    expect(await store.claimSite(tokenHash(), account.id)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('answers not_found for a deleted site', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    await store.setSiteState(site.name, 'deleted');
    expect(await store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'not_found' });
    expect(store.getSiteById(site.id)?.claimed).toBe(false);
  });
});
