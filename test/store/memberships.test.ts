import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord, Store } from '../../src/store/index.js';
import { createAccount, createSite, openTestStore, type TestStore } from './helpers.js';

let t: TestStore;
let store: Store;
let alice: AccountRecord;
let bob: AccountRecord;

beforeAll(async () => {
  t = await openTestStore('members');
  store = t.store;
  alice = await createAccount(store, 'Alice@Example.com');
  bob = await createAccount(store, 'bob@example.com');
});

afterAll(() => t.close());

describe('sites of an account', () => {
  it('lists the sites an account belongs to in site id order, with its role', async () => {
    const owned = await Promise.all(['own-one', 'own-two', 'own-three'].map((name) => createSite(store, name, { accountId: alice.id })));
    await store.setMember(owned[1]!.site.id, bob.id, 'viewer');

    const ids = owned.map(({ site }) => site.id).sort();
    const { sites, nextAfter } = store.listSitesOf(alice.id);
    expect(sites.map(({ site }) => site.id)).toEqual(ids);
    expect(sites.every(({ role }) => role === 'owner')).toBe(true);
    expect(nextAfter).toBeUndefined();
    expect(store.listSitesOf(bob.id).sites).toEqual([{ site: owned[1]!.site, role: 'viewer' }]);
  });

  it('pages by site id with an exclusive cursor', () => {
    const all = store.listSitesOf(alice.id).sites.map(({ site }) => site.id);
    const first = store.listSitesOf(alice.id, { limit: 2 });
    expect(first.sites.map(({ site }) => site.id)).toEqual(all.slice(0, 2));
    expect(first.nextAfter).toBe(all[1]);
    const second = store.listSitesOf(alice.id, { limit: 2, after: first.nextAfter! });
    expect(second.sites.map(({ site }) => site.id)).toEqual(all.slice(2));
    expect(second.nextAfter).toBeUndefined();
  });

  it('gives no next cursor when the last page is exactly full', () => {
    const page = store.listSitesOf(alice.id, { limit: 3 });
    expect(page.sites).toHaveLength(3);
    expect(page.nextAfter).toBeUndefined();
  });

  it('clamps the page size to between 1 and 200', async () => {
    const carol = await createAccount(store, 'carol@example.com');
    await Promise.all(Array.from({ length: 205 }, (_, i) => createSite(store, `bulk-${i}`, { accountId: carol.id })));
    const big = store.listSitesOf(carol.id, { limit: 1000 });
    expect(big.sites).toHaveLength(200);
    expect(big.nextAfter).toBe(big.sites[199]!.site.id);
    expect(store.listSitesOf(carol.id).sites).toHaveLength(50);
    expect(store.listSitesOf(carol.id, { limit: 0 }).sites).toHaveLength(1);
    expect(store.countOwnedSites(carol.id)).toBe(205);
  });

  it('leaves out deleted sites, in listings and in the owned count', async () => {
    const { site } = await createSite(store, 'soon-gone', { accountId: alice.id });
    expect(store.countOwnedSites(alice.id)).toBe(4);
    await store.setSiteState('soon-gone', 'deleted');
    expect(store.listSitesOf(alice.id).sites.map((s) => s.site.id)).not.toContain(site.id);
    expect(store.countOwnedSites(alice.id)).toBe(3);
  });

  it('counts owned sites only, not sites the account merely belongs to', () => {
    expect(store.countOwnedSites(bob.id)).toBe(0);
  });

  it('answers an unknown or odd account with nothing', () => {
    expect(store.listSitesOf('acct_nobody')).toEqual({ sites: [] });
    expect(store.listSitesOf('\u0000weird')).toEqual({ sites: [] });
    expect(store.countOwnedSites('acct_nobody')).toBe(0);
  });
});

describe('members', () => {
  it('lists the members of a site with their e-mail addresses', async () => {
    const { site } = await createSite(store, 'team-site', { accountId: alice.id });
    await store.setMember(site.id, bob.id, 'editor');
    const members = store.listMembers(site.id);
    expect(members).toHaveLength(2);
    expect(members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ siteId: site.id, accountId: alice.id, role: 'owner', email: 'alice@example.com' }),
        expect.objectContaining({ siteId: site.id, accountId: bob.id, role: 'editor', email: 'bob@example.com' }),
      ]),
    );
    expect(store.listMembers('site_nothing')).toEqual([]);
  });

  it('removes a member from both indexes', async () => {
    const { site } = await createSite(store, 'shrinking-site', { accountId: alice.id });
    await store.setMember(site.id, bob.id, 'viewer');
    expect(await store.removeMember(site.id, bob.id)).toBe('removed');
    expect(store.getRole(site.id, bob.id)).toBeUndefined();
    expect(store.listSitesOf(bob.id).sites.map((s) => s.site.id)).not.toContain(site.id);
    expect(store.listMembers(site.id).map((m) => m.accountId)).toEqual([alice.id]);
  });

  it('reports a removal of someone who is not a member', async () => {
    const { site } = await createSite(store, 'lonely-site', { accountId: alice.id });
    expect(await store.removeMember(site.id, bob.id)).toBe('not_member');
    expect(await store.removeMember('site_nothing', bob.id)).toBe('not_member');
  });

  it('never removes the last owner', async () => {
    const { site } = await createSite(store, 'owned-site', { accountId: alice.id });
    expect(await store.removeMember(site.id, alice.id)).toBe('last_owner');
    expect(store.getRole(site.id, alice.id)).toBe('owner');

    await store.setMember(site.id, bob.id, 'owner');
    expect(await store.removeMember(site.id, alice.id)).toBe('removed');
    expect(await store.removeMember(site.id, bob.id)).toBe('last_owner');
    expect(store.listMembers(site.id).map((m) => [m.accountId, m.role])).toEqual([[bob.id, 'owner']]);
  });

  it('lets only one of two owners removing each other at once win', async () => {
    const { site } = await createSite(store, 'duel-site', { accountId: alice.id });
    await store.setMember(site.id, bob.id, 'owner');
    const results = await Promise.all([store.removeMember(site.id, alice.id), store.removeMember(site.id, bob.id)]);
    expect(results.sort()).toEqual(['last_owner', 'removed']);
    expect(store.listMembers(site.id)).toHaveLength(1);
  });
});
