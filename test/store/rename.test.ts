import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { createSite, openTestStore, type TestStore } from './helpers.js';

let t: TestStore;
let store: Store;

beforeAll(async () => {
  t = await openTestStore('rename');
  store = t.store;
});

afterAll(() => t.close());

describe('renameSite', () => {
  it('gives the site its new name and keeps the old one resolving to it', async () => {
    const { site } = await createSite(store, 'first-name');
    const heard: Array<{ siteId: string; name: string }> = [];
    const stop = store.onSiteChanged((change) => heard.push(change));

    const result = await store.renameSite('first-name', 'second-name');
    stop();

    const renamed = { ...site, name: 'second-name' };
    expect(result).toEqual({ ok: true, site: renamed });
    expect(store.getSite('second-name')).toEqual(renamed);
    expect(store.getSite('first-name')).toEqual(renamed);
    expect(store.getSiteById(site.id)).toEqual(renamed);
    expect(store.isNameUsed('first-name')).toBe(true);
    expect(store.isNameUsed('second-name')).toBe(true);
    // One change by site id: caches drop every name cached for that id, the old one included.
    expect(heard).toEqual([{ siteId: site.id, name: 'second-name' }]);
  });

  it('follows a chain of renames: every former name resolves to the current site', async () => {
    const { site } = await createSite(store, 'chain-a');
    expect((await store.renameSite('chain-a', 'chain-b')).ok).toBe(true);
    expect((await store.renameSite('chain-b', 'chain-c')).ok).toBe(true);
    for (const name of ['chain-a', 'chain-b', 'chain-c']) {
      expect(store.getSite(name)).toMatchObject({ id: site.id, name: 'chain-c' });
    }
  });

  it('keeps the site, its revisions and members as they were', async () => {
    const { site, revision } = await createSite(store, 'keep-content', { accountId: 'acct_keeper' });
    await store.renameSite('keep-content', 'kept-content');
    expect(store.getSite('kept-content')?.liveRevision).toBe(revision.id);
    expect(store.getRole(site.id, 'acct_keeper')).toBe('owner');
    expect(store.listFiles(revision.id)).toHaveLength(1);
  });

  it.each([
    ['the name of another site', 'taken-one', 'taken-two'],
    ['a former name of another site', 'taken-three', 'chain-a'],
    ['its own former name', 'chain-c', 'chain-b'],
    ['its own current name', 'taken-one', 'taken-one'],
  ])('refuses %s', async (_, name, newName) => {
    for (const n of ['taken-one', 'taken-two', 'taken-three']) if (!store.isNameUsed(n)) await createSite(store, n);
    const before = store.getSite(name);
    expect(await store.renameSite(name, newName)).toEqual({ ok: false, reason: 'name_taken' });
    expect(store.getSite(name)).toEqual(before);
  });

  it('renames only by the current name, not a former one', async () => {
    expect(await store.renameSite('chain-a', 'chain-d')).toEqual({ ok: false, reason: 'not_found' });
    expect(store.isNameUsed('chain-d')).toBe(false);
  });

  it('answers not_found for an unknown or deleted site', async () => {
    expect(await store.renameSite('no-such-site', 'any-new-name')).toEqual({ ok: false, reason: 'not_found' });
    await createSite(store, 'deleted-site');
    await store.setSiteState('deleted-site', 'deleted');
    expect(await store.renameSite('deleted-site', 'revived-site')).toEqual({ ok: false, reason: 'not_found' });
  });

  it('never hands a former name to a new site', async () => {
    await createSite(store, 'was-here');
    await store.renameSite('was-here', 'moved-on');
    const result = await store.commitRevision({
      site: 'was-here',
      create: { name: 'was-here', plan: 'free', claimed: true },
      baseRevision: null,
      files: new Map(),
      kind: 'deploy',
      createdBy: 'admin',
    });
    expect(result).toEqual({ ok: false, reason: 'name_taken' });
  });

  it('lets only one of two renames to the same new name win', async () => {
    await createSite(store, 'racer-one');
    await createSite(store, 'racer-two');
    const results = await Promise.all([store.renameSite('racer-one', 'finish-line'), store.renameSite('racer-two', 'finish-line')]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'name_taken' }]);
  });
});
