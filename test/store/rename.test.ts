import { describe, expect, it } from 'vitest';
import { createSite, useTestStore } from './helpers.js';

const t = useTestStore('rename');

describe('renameSite', () => {
  it('gives the site its new name and keeps the old one resolving to it', async () => {
    const { site } = await createSite(t.store, 'first-name');
    const heard: Array<{ siteId: string; name: string }> = [];
    const stop = t.store.onSiteChanged((change) => heard.push(change));

    const result = await t.store.renameSite('first-name', 'second-name');
    stop();

    const renamed = { ...site, name: 'second-name' };
    expect(result).toEqual({ ok: true, site: renamed });
    expect(t.store.getSite('second-name')).toEqual(renamed);
    expect(t.store.getSite('first-name')).toEqual(renamed);
    expect(t.store.getSiteById(site.id)).toEqual(renamed);
    expect(t.store.isNameUsed('first-name')).toBe(true);
    expect(t.store.isNameUsed('second-name')).toBe(true);
    // One change by site id: caches drop every name cached for that id, the old one included.
    expect(heard).toEqual([{ siteId: site.id, name: 'second-name' }]);
  });

  it('follows a chain of renames: every former name resolves to the current site', async () => {
    const { site } = await createSite(t.store, 'chain-a');
    expect((await t.store.renameSite('chain-a', 'chain-b')).ok).toBe(true);
    expect((await t.store.renameSite('chain-b', 'chain-c')).ok).toBe(true);
    for (const name of ['chain-a', 'chain-b', 'chain-c']) {
      expect(t.store.getSite(name)).toMatchObject({ id: site.id, name: 'chain-c' });
    }
  });

  it('keeps the site, its revisions and members as they were', async () => {
    const { site, revision } = await createSite(t.store, 'keep-content', { accountId: 'acct_keeper' });
    await t.store.renameSite('keep-content', 'kept-content');
    expect(t.store.getSite('kept-content')?.liveRevision).toBe(revision.id);
    expect(t.store.getRole(site.id, 'acct_keeper')).toBe('owner');
    expect(t.store.listFiles(revision.id)).toHaveLength(1);
  });

  it.each([
    ['the name of another site', 'taken-one', 'taken-two'],
    ['a former name of another site', 'taken-three', 'chain-a'],
    ['its own former name', 'chain-c', 'chain-b'],
    ['its own current name', 'taken-one', 'taken-one'],
  ])('refuses %s', async (_, name, newName) => {
    for (const n of ['taken-one', 'taken-two', 'taken-three']) if (!t.store.isNameUsed(n)) await createSite(t.store, n);
    const before = t.store.getSite(name);
    expect(await t.store.renameSite(name, newName)).toEqual({ ok: false, reason: 'name_taken' });
    expect(t.store.getSite(name)).toEqual(before);
  });

  it('renames only by the current name, not a former one', async () => {
    expect(await t.store.renameSite('chain-a', 'chain-d')).toEqual({ ok: false, reason: 'not_found' });
    expect(t.store.isNameUsed('chain-d')).toBe(false);
  });

  it('answers not_found for an unknown or deleted site', async () => {
    expect(await t.store.renameSite('no-such-site', 'any-new-name')).toEqual({ ok: false, reason: 'not_found' });
    await createSite(t.store, 'deleted-site');
    await t.store.setSiteState('deleted-site', 'deleted');
    expect(await t.store.renameSite('deleted-site', 'revived-site')).toEqual({ ok: false, reason: 'not_found' });
  });

  it('never hands a former name to a new site', async () => {
    await createSite(t.store, 'was-here');
    await t.store.renameSite('was-here', 'moved-on');
    const result = await t.store.commitRevision({
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
    await createSite(t.store, 'racer-one');
    await createSite(t.store, 'racer-two');
    const results = await Promise.all([t.store.renameSite('racer-one', 'finish-line'), t.store.renameSite('racer-two', 'finish-line')]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'name_taken' }]);
  });
});
