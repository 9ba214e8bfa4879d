import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken, type AccountRecord } from '../../src/store/index.js';
import { createAccount, createSite, useTestStore } from './helpers.js';

const HOUR_MS = 3600_000;

const t = useTestStore('claim');
let account: AccountRecord;
let counter = 0;

beforeAll(async () => {
  account = await createAccount(t.store, 'claimer@example.com');
});

/** An anonymous site as a deploy without credentials makes it: expiring, with both tokens. */
async function anonymousSite() {
  const n = ++counter;
  const siteToken = `st_test${n}`;
  const claimToken = `ct_test${n}`;
  const { site } = await createSite(t.store, `anon-site-${n}`, {
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
    const stop = t.store.onSiteChanged(({ siteId }) => heard.push(siteId));

    const result = await t.store.claimSite(claimTokenHash, account.id);
    stop();

    expect(result.ok).toBe(true);
    const claimed = t.store.getSiteById(site.id)!;
    expect(result).toEqual({ ok: true, site: claimed, endedWebhooks: [] });
    expect(claimed).toMatchObject({ claimed: true, accountId: account.id, plan: 'free', state: 'active', siteTokenHash });
    expect(claimed).not.toHaveProperty('expiresAt');
    expect(claimed).not.toHaveProperty('claimTokenHash');
    expect(claimed.liveRevision).toBe(site.liveRevision);
    expect(t.store.getRole(site.id, account.id)).toBe('owner');
    expect(t.store.listSitesOf(account.id).sites).toEqual([{ site: claimed, role: 'owner' }]);
    expect(t.store.countOwnedSites(account.id)).toBe(1);
    expect(heard).toEqual([site.id]);
  });

  it('uses the claim token up but keeps the site token (it may still read the claim)', async () => {
    const { site, siteTokenHash, claimTokenHash } = await anonymousSite();
    await t.store.claimSite(claimTokenHash, account.id);
    expect(t.store.findToken(claimTokenHash)).toBeUndefined();
    expect(t.store.findToken(siteTokenHash)).toEqual({ kind: 'site', siteId: site.id });
  });

  it('refuses a second claim with the same link: the token is gone', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const other = await createAccount(t.store, 'late@example.com');
    expect((await t.store.claimSite(claimTokenHash, account.id)).ok).toBe(true);
    expect(await t.store.claimSite(claimTokenHash, other.id)).toEqual({ ok: false, reason: 'not_found' });
    expect(t.store.getSiteById(site.id)?.accountId).toBe(account.id);
    expect(t.store.getRole(site.id, other.id)).toBeUndefined();
  });

  it('lets only one of two simultaneous claims win', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const other = await createAccount(t.store, 'racer@example.com');
    const results = await Promise.all([t.store.claimSite(claimTokenHash, account.id), t.store.claimSite(claimTokenHash, other.id)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(t.store.listMembers(site.id)).toHaveLength(1);
  });

  it('reports a site that is claimed already when its claim token still exists', async () => {
    const claimTokenHash = hashToken('ct_claimed-already');
    await createSite(t.store, 'claimed-already', { claimed: true, accountId: account.id, claimTokenHash });
    expect(await t.store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'already_claimed' });
  });

  it('refuses an expired site, from the moment of expiry, and changes nothing', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const saved = t.clock.now;
    t.clock.now = site.expiresAt!;
    try {
      expect(await t.store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'expired' });
      t.clock.now = site.expiresAt! + HOUR_MS;
      expect(await t.store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'expired' });
    } finally {
      t.clock.now = saved;
    }
    expect(t.store.getSiteById(site.id)).toEqual(site);
    expect(t.store.findToken(claimTokenHash)).toEqual({ kind: 'claim', siteId: site.id });
    expect(t.store.getRole(site.id, account.id)).toBeUndefined();
  });

  it('claims a site one millisecond before it expires', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    const saved = t.clock.now;
    t.clock.now = site.expiresAt! - 1;
    try {
      expect((await t.store.claimSite(claimTokenHash, account.id)).ok).toBe(true);
    } finally {
      t.clock.now = saved;
    }
  });

  it.each([
    ['an unknown token', () => hashToken('ct_unknown')],
    ['a site token used as a claim token', () => hashToken(`st_test1`)],
    ['an API token used as a claim token', () => hashToken('pl_api')],
  ])('answers not_found for %s', async (_, tokenHash) => {
    await t.store.addApiToken({ accountId: account.id, tokenHash: hashToken('pl_api'), name: 'ci' });
    expect(await t.store.claimSite(tokenHash(), account.id)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('answers not_found for a deleted site', async () => {
    const { site, claimTokenHash } = await anonymousSite();
    await t.store.setSiteState(site.name, 'deleted');
    expect(await t.store.claimSite(claimTokenHash, account.id)).toEqual({ ok: false, reason: 'not_found' });
    expect(t.store.getSiteById(site.id)?.claimed).toBe(false);
  });
});
