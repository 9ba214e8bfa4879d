import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Encoding, FileEntry, RevisionRecord, SiteRecord } from '../../src/store/index.js';
import { openMetadataDbs } from '../../src/store/metadata-dbs.js';
import { createSite, deploySite, markedEntry, useTestStore } from './helpers.js';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const VARIANTS: readonly Encoding[] = ['br', 'gzip'];

// Blob mtimes come from the real clock, so the store's clock starts from it too.
const t = useTestStore('prune-gc', Date.now());

/** A compressible page stored as a blob with its brotli and gzip variants. */
async function page(label: string): Promise<FileEntry> {
  const entry = await t.store.blobs.putFile(Buffer.from(`<p>${label}</p>\n`.repeat(100)), 'text/html; charset=utf-8', { compress: true, quality: 'fast' });
  expect(Object.keys(entry.encodings ?? {}).sort()).toEqual(['br', 'gzip']);
  return entry;
}

/** The blob file and every variant of it that exists. */
function filesOf(entry: FileEntry): string[] {
  return [t.store.blobs.pathOf(entry.sha256), ...VARIANTS.map((e) => t.store.blobs.pathOf(entry.sha256, e))].filter((p) => existsSync(p));
}

/** Sets the mtime of a blob and its variants to `ms` before the store's now. */
function age(entry: FileEntry, ms: number): void {
  const at = (t.clock.now - ms) / 1000;
  for (const path of filesOf(entry)) utimesSync(path, at, at);
}

describe('pruneRevisions', () => {
  let site: SiteRecord;
  let old: RevisionRecord[];
  let live: RevisionRecord;
  let neighbourOld: RevisionRecord;
  const blobs: Record<string, FileEntry> = {};

  beforeAll(async () => {
    for (const label of ['first', 'second', 'third', 'shared', 'neighbour-old', 'neighbour-live']) blobs[label] = await page(label);
    const start = t.clock.now;
    t.clock.now = start - 3 * DAY_MS;
    const created = await createSite(t.store, 'pruned-site', {}, [
      ['/index.html', blobs.first!],
      ['/shared.html', blobs.shared!],
    ]);
    site = created.site;
    const neighbour = await createSite(t.store, 'neighbour-site', {}, [['/index.html', blobs['neighbour-old']!]]);
    neighbourOld = neighbour.revision;
    t.clock.now = start - 2 * DAY_MS;
    const second = await deploySite(t.store, 'pruned-site', [
      ['/index.html', blobs.second!],
      ['/shared.html', blobs.shared!],
    ]);
    await deploySite(t.store, 'neighbour-site', [['/index.html', blobs['neighbour-live']!]]);
    t.clock.now = start - DAY_MS;
    live = await deploySite(t.store, 'pruned-site', [
      ['/index.html', blobs.third!],
      ['/shared.html', blobs.shared!],
    ]);
    t.clock.now = start;
    old = [created.revision, second];
  });

  it('drops revisions created before the cut-off with all their path rows', async () => {
    expect(await t.store.pruneRevisions(site.id, live.createdAt)).toBe(2);
    for (const revision of old) {
      expect(t.store.getRevision(revision.id)).toBeUndefined();
      expect(t.store.listFiles(revision.id)).toEqual([]);
      expect(t.store.getFile(revision.id, '/index.html')).toBeUndefined();
    }
    expect(t.store.listRevisions(site.id).revisions).toEqual([live]);
    expect(t.store.listFiles(live.id).map((f) => f.path)).toEqual(['/index.html', '/shared.html']);
  });

  it('never drops the live revision, however old', async () => {
    expect(await t.store.pruneRevisions(site.id, t.clock.now + DAY_MS)).toBe(0);
    expect(t.store.getSite('pruned-site')?.liveRevision).toBe(live.id);
    expect(t.store.getRevision(live.id)).toEqual(live);
    expect(t.store.listFiles(live.id)).toHaveLength(2);
  });

  it('leaves other sites alone', () => {
    expect(t.store.getRevision(neighbourOld.id)).toEqual(neighbourOld);
    expect(t.store.listFiles(neighbourOld.id)).toHaveLength(1);
  });

  it('answers 0 for an unknown site', async () => {
    expect(await t.store.pruneRevisions('site_none', t.clock.now)).toBe(0);
  });

  it('removes path rows past one batch (2,500 rows)', async () => {
    const rows: [string, FileEntry][] = Array.from({ length: 2500 }, (_, i) => [`/f/${String(i).padStart(5, '0')}.txt`, markedEntry(i + 1)]);
    t.clock.now -= HOUR_MS;
    const { site: big, revision } = await createSite(t.store, 'big-site', {}, rows);
    t.clock.now += HOUR_MS;
    await deploySite(t.store, 'big-site', [['/index.html', markedEntry(1)]]);
    expect(await t.store.pruneRevisions(big.id, t.clock.now)).toBe(1);
    expect(t.store.listFiles(revision.id)).toEqual([]);
    expect(t.store.listRevisions(big.id).revisions).toHaveLength(1);
  });

  describe('collectGarbage', () => {
    it('deletes old blobs no revision references, with their variants, and keeps every referenced one', async () => {
      for (const entry of Object.values(blobs)) age(entry, 2 * HOUR_MS);
      const gone = [...filesOf(blobs.first!), ...filesOf(blobs.second!)];
      expect(gone).toHaveLength(6);

      expect(await t.store.collectGarbage(HOUR_MS)).toBe(6);

      for (const path of gone) expect(existsSync(path)).toBe(false);
      // Live (third, shared), and a retained non-live revision of another site (neighbour-old).
      for (const label of ['third', 'shared', 'neighbour-old', 'neighbour-live']) expect(filesOf(blobs[label]!)).toHaveLength(3);
      expect(t.store.blobs.readSync(blobs.third!.sha256, 'br').byteLength).toBe(blobs.third!.encodings!.br);
    });

    it('keeps unreferenced blobs newer than the grace period (a deploy in flight)', async () => {
      const inFlight = await page('in-flight');
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
      expect(filesOf(inFlight)).toHaveLength(3);

      age(inFlight, HOUR_MS + 1);
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(3);
      expect(filesOf(inFlight)).toEqual([]);
    });

    it('judges a blob together with its variants: a fresh variant keeps the whole group', async () => {
      const entry = await page('fresh-variant');
      age(entry, 2 * HOUR_MS);
      const now = t.clock.now / 1000;
      utimesSync(t.store.blobs.pathOf(entry.sha256, 'br'), now, now);
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
      expect(filesOf(entry)).toHaveLength(3);
      age(entry, 2 * HOUR_MS);
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(3);
    });

    it('keeps an old orphan that a deploy reuses instead of writing (writeSync renews it)', async () => {
      const bytes = Buffer.from('<p>reused by a deploy</p>\n'.repeat(50));
      const entry = await t.store.blobs.putFile(bytes, 'text/html; charset=utf-8', { compress: true, quality: 'fast' });
      age(entry, 2 * HOUR_MS);
      expect(t.store.blobs.writeSync(bytes, entry.sha256)).toBe(false);
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
      expect(filesOf(entry)).toHaveLength(3);
    });

    it('keeps an old orphan that an async write reuses', async () => {
      const bytes = Buffer.from('reused through write()');
      const { sha256 } = await t.store.blobs.write(bytes);
      const at = (t.clock.now - 2 * HOUR_MS) / 1000;
      utimesSync(t.store.blobs.pathOf(sha256), at, at);
      expect((await t.store.blobs.write(bytes)).sha256).toBe(sha256);
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
      expect(t.store.blobs.has(sha256)).toBe(true);
    });

    it('leaves temp files and foreign files to others', async () => {
      const at = (t.clock.now - 2 * HOUR_MS) / 1000;
      const temp = join(t.dir, 'blobs', 'tmp', 'left-behind.tmp');
      const stray = join(t.dir, 'blobs', 'README');
      for (const path of [temp, stray]) {
        writeFileSync(path, 'x');
        utimesSync(path, at, at);
      }
      expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
      expect(existsSync(temp) && existsSync(stray)).toBe(true);
    });

    it('lists every blob file and variant once', async () => {
      const listed: string[] = [];
      for await (const file of t.store.blobs.listBlobFiles()) {
        listed.push(file.path);
        expect(file.path).toBe(t.store.blobs.pathOf(file.sha256, file.encoding));
        expect(file.mtimeMs).toBeGreaterThan(0);
      }
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed).toEqual(expect.arrayContaining(filesOf(blobs.shared!)));
    });
  });
});

describe('deleteRevision', () => {
  it('keeps a tombstone, hides the revision from every read, drops its rows and tells serving threads', async () => {
    const { site, revision: first } = await createSite(t.store, 'deleting-site', {}, [
      ['/index.html', markedEntry(101)],
      ['/mistake.txt', markedEntry(102)],
    ]);
    const second = await deploySite(t.store, 'deleting-site', [['/index.html', markedEntry(103)]]);
    await t.store.changeSiteAccess(site.id, { previews: { mode: 'members', since: 1 } });
    const heard: string[] = [];
    const stop = t.store.onSiteChanged((change) => heard.push(change.siteId));
    try {
      const result = await t.store.deleteRevision(site.id, first.id, 'owner@example.com');
      expect(result).toMatchObject({ ok: true, revision: { id: first.id, number: 1, deletedBy: 'owner@example.com' } });
    } finally {
      stop();
    }
    expect(heard).toContain(site.id);
    expect(t.store.getRevision(first.id)).toBeUndefined();
    expect(t.store.listFiles(first.id)).toEqual([]);
    expect(t.store.getFile(first.id, '/mistake.txt')).toBeUndefined();
    expect(t.store.listRevisions(site.id).revisions.map((r) => r.id)).toEqual([second.id]);
    expect(t.store.getRevisionByNumber(site.id, 1)).toMatchObject({ id: first.id, deletedAt: t.clock.now });
    // The site record is as it was (the write only announced the change).
    const after = t.store.getSite('deleting-site')!;
    expect(after).toMatchObject({ liveRevision: second.id, lastNumber: 2, previews: { mode: 'members', since: 1 } });
    // Numbers are never handed out again.
    expect((await deploySite(t.store, 'deleting-site', [['/index.html', markedEntry(104)]])).number).toBe(3);
  });

  it('refuses the live revision, another site’s revision, a deleted one, and a deleted site', async () => {
    const { site, revision } = await createSite(t.store, 'refusing-site');
    const { site: other, revision: theirs } = await createSite(t.store, 'other-refusing-site');
    await deploySite(t.store, 'other-refusing-site', [['/index.html', markedEntry(2)]]);
    expect(await t.store.deleteRevision(site.id, revision.id, 'x')).toEqual({ ok: false, reason: 'live' });
    expect(await t.store.deleteRevision(site.id, theirs.id, 'x')).toEqual({ ok: false, reason: 'no_revision' });
    expect(await t.store.deleteRevision(site.id, 'rev_none', 'x')).toEqual({ ok: false, reason: 'no_revision' });
    expect((await t.store.deleteRevision(other.id, theirs.id, 'x')).ok).toBe(true);
    expect(await t.store.deleteRevision(other.id, theirs.id, 'x')).toEqual({ ok: false, reason: 'no_revision' });
    await t.store.setSiteState('refusing-site', 'deleted');
    expect(await t.store.deleteRevision(site.id, revision.id, 'x')).toEqual({ ok: false, reason: 'not_found' });
    expect(t.store.getRevision(revision.id)).toBeDefined();
    expect(t.store.listFiles(revision.id)).toHaveLength(1);
  });

  it('leaves blobs that other revisions use to them, and the rest to garbage collection', async () => {
    const kept = await page('kept by the live revision');
    const only = await page('only the deleted draft');
    const { site } = await createSite(t.store, 'collected-site', {}, [['/index.html', kept]]);
    const draft = await t.store.commitRevision({
      site: 'collected-site',
      baseRevision: site.liveRevision!,
      files: new Map([
        ['/index.html', kept],
        ['/only.html', only],
      ]),
      kind: 'deploy',
      createdBy: 'admin',
      publish: false,
    });
    if (!draft.ok) throw new Error(draft.reason);
    age(kept, 2 * HOUR_MS);
    age(only, 2 * HOUR_MS);
    expect(await t.store.collectGarbage(HOUR_MS)).toBe(0);
    expect((await t.store.deleteRevision(site.id, draft.revision.id, 'admin')).ok).toBe(true);
    expect(await t.store.collectGarbage(HOUR_MS)).toBe(3);
    expect(filesOf(only)).toEqual([]);
    expect(filesOf(kept)).toHaveLength(3);
  });

  it('finishes the rows of a deletion cut off part-way at the next prune, and drops the tombstone past the reach', async () => {
    const { site } = await createSite(t.store, 'cut-off-site');
    const draft = await t.store.commitRevision({
      site: 'cut-off-site',
      baseRevision: site.liveRevision!,
      files: new Map([['/a.txt', markedEntry(7)]]),
      kind: 'deploy',
      createdBy: 'admin',
      publish: false,
    });
    if (!draft.ok) throw new Error(draft.reason);
    // What the first transaction leaves when the process dies before the rows go: a tombstone,
    // no id, and the rows still there (written through a second handle on the same environment).
    const raw = openMetadataDbs(join(t.dir, 'meta'));
    await raw.transact(() => {
      void raw.revisions.put([site.id, 2], { ...draft.revision, deletedAt: t.clock.now, deletedBy: 'admin' });
      void raw.revisionIds.remove(draft.revision.id);
    });
    expect(Array.from(raw.paths.getKeys({ start: [draft.revision.id], end: [draft.revision.id, '\uffff'] }))).toHaveLength(1);
    expect(await t.store.pruneRevisions(site.id, 0)).toBe(0);
    // The second handle's read snapshot may predate the prune's commit (lmdb-js keeps a read
    // transaction open until it renews it): read what is committed now.
    raw.env.resetReadTxn();
    expect(Array.from(raw.paths.getKeys({ start: [draft.revision.id], end: [draft.revision.id, '\uffff'] }))).toEqual([]);
    expect(t.store.getRevisionByNumber(site.id, 2)?.deletedAt).toBe(t.clock.now);
    expect(await t.store.pruneRevisions(site.id, t.clock.now + 1)).toBe(1);
    expect(t.store.getRevisionByNumber(site.id, 2)).toBeUndefined();
    expect(t.store.getSite('cut-off-site')?.lastNumber).toBe(2);
  });
});

describe('listSiteIds', () => {
  it('lists every site id, deleted ones included', async () => {
    const ids = t.store.listSiteIds();
    const { site } = await createSite(t.store, 'listed-site');
    await t.store.setSiteState('listed-site', 'deleted');
    expect(t.store.listSiteIds()).toEqual([...ids, site.id].sort());
  });
});
