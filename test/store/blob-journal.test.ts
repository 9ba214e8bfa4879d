// A commit that carries its blobs' bytes (blob-journal.ts): the rows go in the revision's
// transaction, files lost or left empty are put back when the store opens, and a settle drops
// only the rows whose files a sync has written out.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDataDir, openStore, restoreDataDir, type FileEntry, type JournaledBlob, type Store } from '../../src/store/index.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const opened: Array<{ dir: string; store?: Store }> = [];

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-store-journal-'));
  opened.push({ dir });
  return dir;
}

function open(dir: string): Store {
  const store = openStore({ dir });
  opened.push({ dir, store });
  return store;
}

afterEach(async () => {
  for (const { store } of opened) await store?.close().catch(() => undefined);
  for (const { dir } of new Map(opened.map((o) => [o.dir, o])).values()) await rm(dir, { recursive: true, force: true });
  opened.length = 0;
});

/**
 * Blobs as a deploy's worker leaves them: files with no sync, or (`withFiles: false`, a small
 * site analysed in its unpack) no files at all until after the answer.
 */
function writeBlobs(store: Store, contents: string[], withFiles = true): { files: Map<string, FileEntry>; journal: JournaledBlob[] } {
  const files = new Map<string, FileEntry>();
  const journal: JournaledBlob[] = [];
  contents.forEach((text, i) => {
    const bytes = Buffer.from(text);
    const hash = sha256(bytes);
    if (withFiles) store.blobs.writeSync(bytes, hash);
    files.set(`/f${i}.html`, { sha256: hash, size: bytes.byteLength, type: 'text/html' });
    journal.push({ sha256: hash, bytes });
  });
  return { files, journal };
}

async function deploy(store: Store, site: string, files: Map<string, FileEntry>, journal: JournaledBlob[], create = true) {
  const result = await store.commitRevision({
    site,
    ...(create ? { create: { name: site, plan: 'free', claimed: true } } : {}),
    baseRevision: create ? null : store.getSite(site)!.liveRevision!,
    files,
    kind: 'deploy',
    createdBy: 'test',
    journal,
  });
  if (!result.ok) throw new Error(result.reason);
  return result;
}

describe('blob journal', () => {
  it('keeps the bytes with the revision until a settle has synced the files, then drops them', async () => {
    const dir = await freshDir();
    const store = open(dir);
    const { files, journal } = writeBlobs(store, ['<p>one</p>', '<p>two</p>']);
    await deploy(store, 'journaled', files, journal);
    expect(store.journaledBlobs()).toBe(2);

    let flushes = 0;
    const dropped = await store.settleBlobJournal(async () => {
      flushes++;
      await store.blobs.flush();
    });
    expect(dropped).toBe(2);
    expect(flushes).toBe(1);
    expect(store.journaledBlobs()).toBe(0);
    // Nothing left: no sync at all.
    expect(await store.settleBlobJournal(() => Promise.reject(new Error('not called')))).toBe(0);
    for (const [, entry] of files) expect(sha256(store.blobs.readSync(entry.sha256))).toBe(entry.sha256);
  });

  it('keeps the rows of a commit made while a settle syncs, for the next settle', async () => {
    const dir = await freshDir();
    const store = open(dir);
    const first = writeBlobs(store, ['<p>first</p>']);
    await deploy(store, 'racing', first.files, first.journal);
    const second = writeBlobs(store, ['<p>second</p>']);
    const dropped = await store.settleBlobJournal(async () => {
      // A deploy committed after the sync started: its file may not be in this sync.
      await deploy(store, 'racing', second.files, second.journal, false);
      await store.blobs.flush();
    });
    expect(dropped).toBe(1);
    expect(store.journaledBlobs()).toBe(1);
    expect(await store.settleBlobJournal(() => store.blobs.flush())).toBe(1);
    expect(store.journaledBlobs()).toBe(0);
  });

  it('puts back blob files a power cut lost or emptied when the store opens again, before anything reads them', async () => {
    const dir = await freshDir();
    const store = open(dir);
    const { files, journal } = writeBlobs(store, ['<p>lost</p>'.repeat(20), '<p>emptied</p>'.repeat(20), '<p>kept</p>'.repeat(20)]);
    const committed = await deploy(store, 'cut', files, journal);
    const [lost, emptied, kept] = [...files.values()];
    await store.close();
    // What a power cut can leave of files written without a sync.
    rmSync(store.blobs.pathOf(lost!.sha256));
    truncateSync(store.blobs.pathOf(emptied!.sha256), 0);

    const reopened = open(dir);
    expect(reopened.getSite('cut')?.liveRevision).toBe(committed.revision.id);
    for (const entry of [lost!, emptied!, kept!]) expect(sha256(readFileSync(reopened.blobs.pathOf(entry.sha256)))).toBe(entry.sha256);
    expect(reopened.journaledBlobs()).toBe(3);
    expect(await reopened.settleBlobJournal(() => reopened.blobs.flush())).toBe(3);
    // Nothing journaled: opening changes no file (one written over by hand stays as it is).
    await reopened.close();
    writeFileSync(reopened.blobs.pathOf(kept!.sha256), 'changed by hand');
    const again = open(dir);
    expect(readFileSync(again.blobs.pathOf(kept!.sha256), 'utf8')).toBe('changed by hand');
  });

  it('writes nothing when the commit fails', async () => {
    const dir = await freshDir();
    const store = open(dir);
    const { files, journal } = writeBlobs(store, ['<p>base</p>']);
    await deploy(store, 'conflicted', files, journal);
    await store.settleBlobJournal(() => store.blobs.flush());
    const next = writeBlobs(store, ['<p>late</p>']);
    const result = await store.commitRevision({
      site: 'conflicted',
      baseRevision: 'rev_not_the_live_one',
      files: next.files,
      kind: 'deploy',
      createdBy: 'test',
      journal: next.journal,
    });
    expect(result).toMatchObject({ ok: false, reason: 'conflict' });
    expect(store.journaledBlobs()).toBe(0);
  });

  it('leaves the backup of a store with rows to settle its files alone, and a restore serves them', async () => {
    const dir = await freshDir();
    const store = open(dir);
    const { files, journal } = writeBlobs(store, ['<p>backed up</p>', '<p>and restored</p>']);
    await deploy(store, 'backed', files, journal);
    expect(store.journaledBlobs()).toBe(2);
    const target = join(await freshDir(), 'backup');
    const report = await backupDataDir({ dataDir: dir, target });
    expect(report.blobs).toBe(2);
    const restoredDir = join(await freshDir(), 'restored');
    await restoreDataDir({ backup: target, dataDir: restoredDir });
    const restored = open(restoredDir);
    expect(restored.journaledBlobs()).toBe(0);
    const revision = restored.getSite('backed')!.liveRevision!;
    for (const file of restored.listFiles(revision)) expect(sha256(restored.blobs.readSync(file.sha256))).toBe(file.sha256);
    // The live store's rows are its own, settled by its own sync.
    expect(store.journaledBlobs()).toBe(2);
  });

  describe('a deploy answered before its files were written', () => {
    it('has its blobs read from the rows, and fetched into their files for a reader of paths; a blob in neither is refused', async () => {
      const dir = await freshDir();
      const store = open(dir);
      const { files, journal } = writeBlobs(store, ['<p>before its file</p>'], false);
      await deploy(store, 'early', files, journal);
      const [entry] = [...files.values()];
      expect(existsSync(store.blobs.pathOf(entry!.sha256))).toBe(false);
      // Readable from the row, with no file written (a full disk would not stop it).
      expect(store.blobs.isLocal(entry!.sha256)).toBe(true);
      expect(store.blobs.readSync(entry!.sha256).toString()).toBe('<p>before its file</p>');
      expect(existsSync(store.blobs.pathOf(entry!.sha256))).toBe(false);
      // Not as a file until `fetch` writes it.
      expect(store.blobs.isLocal(entry!.sha256, undefined, true)).toBe(false);
      await store.blobs.fetch(entry!.sha256);
      expect(store.blobs.isLocal(entry!.sha256, undefined, true)).toBe(true);
      expect(readFileSync(store.blobs.pathOf(entry!.sha256), 'utf8')).toBe('<p>before its file</p>');
      // The row stays until a settle has synced the file.
      expect(store.journaledBlobs()).toBe(1);
      const nowhere = sha256(Buffer.from('nowhere'));
      expect(store.blobs.isLocal(nowhere)).toBe(false);
      expect(() => store.blobs.readSync(nowhere)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
      await expect(store.blobs.fetch(nowhere)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('is settled by writing the files still missing before the sync, then dropping the rows', async () => {
      const dir = await freshDir();
      const store = open(dir);
      const { files, journal } = writeBlobs(store, ['<p>one</p>', '<p>two</p>'], false);
      await deploy(store, 'unwritten', files, journal);
      let sawFiles = false;
      const dropped = await store.settleBlobJournal(async () => {
        sawFiles = [...files.values()].every((entry) => existsSync(store.blobs.pathOf(entry.sha256)));
        await store.blobs.flush();
      });
      expect(sawFiles).toBe(true);
      expect(dropped).toBe(2);
      for (const entry of files.values()) expect(sha256(readFileSync(store.blobs.pathOf(entry.sha256)))).toBe(entry.sha256);
    });

    it('has its files written when the store opens again after a crash', async () => {
      const dir = await freshDir();
      const store = open(dir);
      const { files, journal } = writeBlobs(store, ['<p>crashed</p>'.repeat(10)], false);
      await deploy(store, 'crashed', files, journal);
      await store.close();
      const reopened = open(dir);
      for (const entry of files.values()) expect(sha256(readFileSync(reopened.blobs.pathOf(entry.sha256)))).toBe(entry.sha256);
    });

    it('keeps its blobs from garbage collection while they have rows, even unreferenced', async () => {
      const dir = await freshDir();
      const store = open(dir);
      const first = writeBlobs(store, ['<p>only in the journal</p>'], false);
      const { revision } = await deploy(store, 'collected', first.files, first.journal);
      const second = writeBlobs(store, ['<p>the next revision</p>']);
      await deploy(store, 'collected', second.files, [], false);
      const site = store.getSite('collected')!;
      expect((await store.deleteRevision(site.id, revision.id, 'test')).ok).toBe(true);
      const [entry] = [...first.files.values()];
      // A reader wrote the file from the row: unreferenced now, but its row still makes it durable.
      await store.blobs.fetch(entry!.sha256);
      await store.collectGarbage(0);
      expect(existsSync(store.blobs.pathOf(entry!.sha256))).toBe(true);
      await store.settleBlobJournal(() => store.blobs.flush());
      await store.collectGarbage(0);
      expect(existsSync(store.blobs.pathOf(entry!.sha256))).toBe(false);
    });

    it('is in a backup taken while its files are still missing', async () => {
      const dir = await freshDir();
      const store = open(dir);
      const { files, journal } = writeBlobs(store, ['<p>backed up before its file</p>'], false);
      await deploy(store, 'backed-early', files, journal);
      const target = join(await freshDir(), 'backup');
      expect((await backupDataDir({ dataDir: dir, target })).blobs).toBe(1);
      const restoredDir = join(await freshDir(), 'restored');
      await restoreDataDir({ backup: target, dataDir: restoredDir });
      const restored = open(restoredDir);
      for (const entry of files.values()) expect(sha256(restored.blobs.readSync(entry.sha256))).toBe(entry.sha256);
    });
  });
});
