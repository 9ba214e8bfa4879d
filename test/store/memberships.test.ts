import { beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/index.js';
import { createAccount, createSite, useTestStore } from './helpers.js';

const t = useTestStore('members');
let alice: AccountRecord;
let bob: AccountRecord;

beforeAll(async () => {
  alice = await createAccount(t.store, 'Alice@Example.com');
  bob = await createAccount(t.store, 'bob@example.com');
});

describe('sites of an account', () => {
  it('lists the sites an account belongs to in site id order, with its role', async () => {
    const owned = await Promise.all(['own-one', 'own-two', 'own-three'].map((name) => createSite(t.store, name, { accountId: alice.id })));
    await t.store.setMember(owned[1]!.site.id, bob.id, 'viewer');

    const ids = owned.map(({ site }) => site.id).sort();
    const { sites, nextAfter } = t.store.listSitesOf(alice.id);
    expect(sites.map(({ site }) => site.id)).toEqual(ids);
    expect(sites.every(({ role }) => role === 'owner')).toBe(true);
    expect(nextAfter).toBeUndefined();
    expect(t.store.listSitesOf(bob.id).sites).toEqual([{ site: owned[1]!.site, role: 'viewer' }]);
  });

  it('pages by site id with an exclusive cursor', () => {
    const all = t.store.listSitesOf(alice.id).sites.map(({ site }) => site.id);
    const first = t.store.listSitesOf(alice.id, { limit: 2 });
    expect(first.sites.map(({ site }) => site.id)).toEqual(all.slice(0, 2));
    expect(first.nextAfter).toBe(all[1]);
    const second = t.store.listSitesOf(alice.id, { limit: 2, after: first.nextAfter! });
    expect(second.sites.map(({ site }) => site.id)).toEqual(all.slice(2));
    expect(second.nextAfter).toBeUndefined();
  });

  it('gives no next cursor when the last page is exactly full', () => {
    const page = t.store.listSitesOf(alice.id, { limit: 3 });
    expect(page.sites).toHaveLength(3);
    expect(page.nextAfter).toBeUndefined();
  });

  it('clamps the page size to between 1 and 200', async () => {
    const carol = await createAccount(t.store, 'carol@example.com');
    await Promise.all(Array.from({ length: 205 }, (_, i) => createSite(t.store, `bulk-${i}`, { accountId: carol.id })));
    const big = t.store.listSitesOf(carol.id, { limit: 1000 });
    expect(big.sites).toHaveLength(200);
    expect(big.nextAfter).toBe(big.sites[199]!.site.id);
    expect(t.store.listSitesOf(carol.id).sites).toHaveLength(50);
    expect(t.store.listSitesOf(carol.id, { limit: 0 }).sites).toHaveLength(1);
    expect(t.store.countOwnedSites(carol.id)).toBe(205);
  });

  it('leaves out deleted sites, in listings and in the owned count', async () => {
    const { site } = await createSite(t.store, 'soon-gone', { accountId: alice.id });
    expect(t.store.countOwnedSites(alice.id)).toBe(4);
    await t.store.setSiteState('soon-gone', 'deleted');
    expect(t.store.listSitesOf(alice.id).sites.map((s) => s.site.id)).not.toContain(site.id);
    expect(t.store.countOwnedSites(alice.id)).toBe(3);
  });

  it('counts owned sites only, not sites the account merely belongs to', () => {
    expect(t.store.countOwnedSites(bob.id)).toBe(0);
  });

  it('answers an unknown or odd account with nothing', () => {
    expect(t.store.listSitesOf('acct_nobody')).toEqual({ sites: [] });
    expect(t.store.listSitesOf('\u0000weird')).toEqual({ sites: [] });
    expect(t.store.countOwnedSites('acct_nobody')).toBe(0);
  });
});

describe('members', () => {
  it('lists the members of a site with their e-mail addresses', async () => {
    const { site } = await createSite(t.store, 'team-site', { accountId: alice.id });
    await t.store.setMember(site.id, bob.id, 'editor');
    const members = t.store.listMembers(site.id);
    expect(members).toHaveLength(2);
    expect(members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ siteId: site.id, accountId: alice.id, role: 'owner', email: 'alice@example.com' }),
        expect.objectContaining({ siteId: site.id, accountId: bob.id, role: 'editor', email: 'bob@example.com' }),
      ]),
    );
    expect(t.store.listMembers('site_nothing')).toEqual([]);
  });

  it('removes a member from both indexes', async () => {
    const { site } = await createSite(t.store, 'shrinking-site', { accountId: alice.id });
    await t.store.setMember(site.id, bob.id, 'viewer');
    expect(await t.store.removeMember(site.id, bob.id)).toBe('removed');
    expect(t.store.getRole(site.id, bob.id)).toBeUndefined();
    expect(t.store.listSitesOf(bob.id).sites.map((s) => s.site.id)).not.toContain(site.id);
    expect(t.store.listMembers(site.id).map((m) => m.accountId)).toEqual([alice.id]);
  });

  it('reports a removal of someone who is not a member', async () => {
    const { site } = await createSite(t.store, 'lonely-site', { accountId: alice.id });
    expect(await t.store.removeMember(site.id, bob.id)).toBe('not_member');
    expect(await t.store.removeMember('site_nothing', bob.id)).toBe('not_member');
  });

  it('never removes the last owner', async () => {
    const { site } = await createSite(t.store, 'owned-site', { accountId: alice.id });
    expect(await t.store.removeMember(site.id, alice.id)).toBe('last_owner');
    expect(t.store.getRole(site.id, alice.id)).toBe('owner');

    await t.store.setMember(site.id, bob.id, 'owner');
    expect(await t.store.removeMember(site.id, alice.id)).toBe('removed');
    expect(await t.store.removeMember(site.id, bob.id)).toBe('last_owner');
    expect(t.store.listMembers(site.id).map((m) => [m.accountId, m.role])).toEqual([[bob.id, 'owner']]);
  });

  it('lets only one of two owners removing each other at once win', async () => {
    const { site } = await createSite(t.store, 'duel-site', { accountId: alice.id });
    await t.store.setMember(site.id, bob.id, 'owner');
    const results = await Promise.all([t.store.removeMember(site.id, alice.id), t.store.removeMember(site.id, bob.id)]);
    expect(results.sort()).toEqual(['last_owner', 'removed']);
    expect(t.store.listMembers(site.id)).toHaveLength(1);
  });
});
