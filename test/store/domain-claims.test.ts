import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openMetadataDbs } from '../../src/store/metadata-dbs.js';
import { openStore, type DomainRecord, type Store } from '../../src/store/index.js';
import { publishSite, tempDir } from '../helpers/sites.js';

/**
 * Claims of custom domains in the store: each site's claim is its own record, so claims of
 * several sites on one domain live side by side; one holds the domain at most; and claims stored
 * in the former layout (one record per domain, keyed by the domain) are moved when the store opens.
 */

const open: Store[] = [];
afterAll(async () => {
  for (const store of open) await store.close().catch(() => undefined);
});

async function storeWithSites(...names: string[]): Promise<{ store: Store; dir: string; ids: string[] }> {
  const dir = tempDir('plinth-domain-claims-');
  const store = openStore({ dir });
  open.push(store);
  for (const name of names) await publishSite(store, name, { 'index.html': name });
  return { store, dir, ids: names.map((name) => store.getSite(name)!.id) };
}

const claim = (store: Store, domain: string, siteId: string) => store.addDomain({ domain, siteId, token: `plinth-verify=${siteId}`, maxPerSite: 5 });

describe('claims side by side', () => {
  it.each<[string, 'added' | 'taken', DomainRecord['status'] | 'removed' | undefined]>([
    ['pending', 'added', undefined],
    ['failed', 'added', 'failed'],
    ['active', 'taken', 'active'],
    ['suspended', 'taken', 'suspended'],
    ['removed', 'added', 'removed'],
  ])("another site's %s claim: a new claim is %s, and the first claim is left as it was", async (_what, outcome, first) => {
    const { store, ids } = await storeWithSites('claim-one', 'claim-two');
    const domain = 'www.side-by-side.example';
    const added = await claim(store, domain, ids[0]!);
    if (!added.ok) throw new Error(added.reason);
    if (first === 'removed') await store.removeDomain(ids[0]!, domain);
    else if (first !== undefined) await store.updateDomain(domain, added.record.claim, { status: first });
    const before = store.getDomainClaim(domain, ids[0]!);

    const second = await claim(store, domain, ids[1]!);
    expect(second.ok ? 'added' : second.reason).toBe(outcome);
    expect(store.getDomainClaim(domain, ids[0]!)).toEqual(before);
    expect(store.listDomains(ids[0]!)).toEqual(before ? [before] : []);
    if (second.ok) expect(store.listDomains(ids[1]!)).toEqual([second.record]);
  });

  it('lets one claim hold a domain: a second cannot become active while the first holds it', async () => {
    const { store, ids } = await storeWithSites('hold-one', 'hold-two');
    const domain = 'hold.example';
    const [a, b] = [await claim(store, domain, ids[0]!), await claim(store, domain, ids[1]!)];
    if (!a.ok || !b.ok) throw new Error('not added');
    const [first, second] = await Promise.all([
      store.updateDomain(domain, a.record.claim, { status: 'active', verifiedAt: 1, checkedAt: 1 }),
      store.updateDomain(domain, b.record.claim, { status: 'active', verifiedAt: 2, checkedAt: 2 }),
    ]);
    expect(first).toMatchObject({ status: 'active' });
    expect(second).toMatchObject({ status: 'pending', checkedAt: 2 });
    expect(second).not.toHaveProperty('verifiedAt');
    expect(store.getDomainHolder(domain)).toMatchObject({ siteId: ids[0] });
    expect(store.getDomain(domain)).toMatchObject({ siteId: ids[0], status: 'active' });

    // Suspended, it still holds; removed, the other may become active.
    await store.updateDomain(domain, a.record.claim, { status: 'suspended' });
    expect(await store.updateDomain(domain, b.record.claim, { status: 'active' })).toMatchObject({ status: 'pending' });
    await store.removeDomain(ids[0]!, domain);
    expect(await store.updateDomain(domain, b.record.claim, { status: 'active' })).toMatchObject({ status: 'active' });
    expect(store.getDomain(domain)).toMatchObject({ siteId: ids[1] });
  });
});

describe('claims stored in the former layout', () => {
  it('are moved when the store opens, and keep working: served, listed, checked, removed', async () => {
    const { store, dir, ids } = await storeWithSites('legacy-site', 'newer-site');
    await store.close();
    open.splice(open.indexOf(store), 1);

    // As the previous version stored them: keyed by the domain, one claim each.
    const legacy: DomainRecord[] = [
      {
        domain: 'www.legacy.example',
        siteId: ids[0]!,
        claim: 'dom_legacy1',
        status: 'active',
        token: 'plinth-verify=a',
        primary: true,
        createdAt: 1,
        verifiedAt: 2,
      },
      { domain: 'legacy.example', siteId: ids[0]!, claim: 'dom_legacy2', status: 'pending', token: 'plinth-verify=b', primary: false, createdAt: 3 },
    ];
    const raw = openMetadataDbs(join(dir, 'meta'));
    await raw.env.transaction(() => {
      for (const record of legacy) {
        void raw.domains.put(record.domain, record);
        void raw.siteDomains.put([record.siteId, record.domain], 1);
      }
    });
    await raw.env.close();

    const reopened = openStore({ dir });
    open.push(reopened);
    expect(reopened.getDomain('www.legacy.example')).toEqual(legacy[0]);
    expect(reopened.getDomainHolder('www.legacy.example')).toEqual(legacy[0]);
    expect(reopened.getDomainClaim('legacy.example', ids[0]!)).toEqual(legacy[1]);
    expect(reopened.listDomains(ids[0]!)).toEqual([legacy[1], legacy[0]]);
    expect(reopened.listAllDomains()).toHaveLength(2);
    // The active one still holds its domain; the pending one is still a claim others sit beside.
    expect(await claim(reopened, 'www.legacy.example', ids[1]!)).toMatchObject({ ok: false, reason: 'taken' });
    expect(await claim(reopened, 'legacy.example', ids[1]!)).toMatchObject({ ok: true });
    expect(await reopened.updateDomain('legacy.example', 'dom_legacy2', { status: 'active' })).toMatchObject({ status: 'active' });
    expect(await reopened.removeDomain(ids[0]!, 'www.legacy.example')).toBe(true);
    expect(reopened.getDomain('www.legacy.example')).toBeUndefined();
    expect(await reopened.liftLegacyDomains()).toBe(0);

    // Nothing is left in the former layout.
    await reopened.close();
    open.splice(open.indexOf(reopened), 1);
    const after = openMetadataDbs(join(dir, 'meta'));
    expect(Array.from(after.domains.getKeys())).toEqual([]);
    await after.env.close();
  });
});
