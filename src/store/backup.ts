import { createHash } from 'node:crypto';
import { constants, createReadStream, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { chmod, copyFile, mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { syncFilesystem } from './filesystem-sync.js';
import { blobLayoutOf, blobPath } from './blob-store.js';
import { openBlobStore } from './blobs-entry.js';
import { openStore } from './open.js';
import { ENCODINGS, type Encoding } from '../rules/index.js';
import type { Store } from './metadata.js';

/**
 * Backups of a data directory, taken while the server runs and deploys go on.
 *
 * A backup is itself laid out as a data directory (`meta/data.mdb`, `blobs/` in the layout of
 * blob-store.ts) plus `blobs.json` (every blob it holds, with sizes) and `backup.json` (written
 * last: a backup without it is incomplete). The LMDB copy is one committed transaction, compacted; the blobs
 * copied are exactly those its revisions reference. Blobs are immutable, so copying them after
 * the snapshot is safe as long as none is deleted meanwhile: the backup pins the blob store,
 * which makes garbage collection in every process wait.
 */

const FORMAT = 1;
const PARALLEL_COPIES = 16;

export interface BackupReport {
  format: number;
  createdAt: string;
  sites: number;
  revisions: number;
  blobs: number;
  /** Blob and variant bytes copied. */
  blobBytes: number;
  lmdbBytes: number;
  ms: number;
}

interface BlobListing {
  sha256: string;
  size: number;
  /** Sizes of the precompressed variants the revisions record. */
  variants: Partial<Record<Encoding, number>>;
}

/** Copies a consistent snapshot of `dataDir` into `target`, which must not exist or be empty. */
export async function backupDataDir(options: { dataDir: string; target: string; now?: () => number }): Promise<BackupReport> {
  const started = performance.now();
  const now = options.now ?? Date.now;
  const target = resolve(options.target);
  requireEmpty(target, 'The backup folder');
  // A backup holds every record and the service's secrets (the key that signs access cookies and
  // preview links): its owner's alone, whatever the umask.
  await mkdir(target, { recursive: true });
  await chmod(target, 0o700);
  const live = openStore({ dir: options.dataDir });
  const release = live.blobs.pin();
  let snapshot: Store | undefined;
  try {
    const lmdbPath = join(target, 'meta', 'data.mdb');
    await live.snapshot(join(target, 'meta'));
    snapshot = openStore({ dir: target });
    const { sites, revisions, blobs } = referencedBlobs(snapshot);
    let blobBytes = 0;
    await inParallel(blobs, async (blob) => {
      // A blob of a deploy answered just before the snapshot may wait in the journal for its file.
      await live.blobs.fetch(blob.sha256);
      const copied = await copyChecked(live.blobs.pathOf(blob.sha256), snapshot!.blobs.pathOf(blob.sha256), blob.size);
      blobBytes += copied;
      for (const encoding of ENCODINGS) {
        const size = blob.variants[encoding];
        if (size === undefined) continue;
        const variant = await copyChecked(live.blobs.pathOf(blob.sha256, encoding), snapshot!.blobs.pathOf(blob.sha256, encoding), size);
        blobBytes += variant;
      }
    });
    await writeFile(join(target, 'blobs.json'), JSON.stringify(blobs));
    // Blob bytes the snapshot's commits carried (blob-journal.ts) are in the files just copied
    // (each written from its row first if it was not yet): the backup keeps the files alone,
    // made durable by the sync below.
    await snapshot.settleBlobJournal(() => Promise.resolve());
    await syncFilesystem(target);
    const report: BackupReport = {
      format: FORMAT,
      createdAt: new Date(now()).toISOString(),
      sites,
      revisions,
      blobs: blobs.length,
      blobBytes,
      lmdbBytes: (await stat(lmdbPath)).size,
      ms: Math.round(performance.now() - started),
    };
    await writeDurably(join(target, 'backup.json'), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    release();
    await snapshot?.close();
    await live.close();
  }
}

export interface RestoreReport {
  sites: number;
  revisions: number;
  blobs: number;
  blobBytes: number;
  ms: number;
}

/**
 * Restores a backup into `dataDir`, which must not exist or be empty (the server must not be
 * running on it). Every blob's hash and size is checked against the backup's list; the LMDB file
 * goes in last, so a restore cut short leaves no index that points at missing blobs.
 */
export async function restoreDataDir(options: { backup: string; dataDir: string }): Promise<RestoreReport> {
  const started = performance.now();
  const backup = resolve(options.backup);
  const dataDir = resolve(options.dataDir);
  const manifest = join(backup, 'backup.json');
  if (!existsSync(manifest)) throw new Error(`${backup} is not a complete backup (no backup.json)`);
  const format = (JSON.parse(await readFile(manifest, 'utf8')) as { format?: unknown }).format;
  if (format !== FORMAT) throw new Error(`${backup} has backup format ${String(format)}; this version reads format ${FORMAT}`);
  requireEmpty(dataDir, 'The data directory to restore into');

  const blobs = JSON.parse(await readFile(join(backup, 'blobs.json'), 'utf8')) as BlobListing[];
  // The blob store alone: no LMDB environment exists here until the index is copied in at the end.
  const target = openBlobStore({ dir: dataDir });
  let blobBytes = 0;
  // A backup has its blob folder's layout: flat since backups made by this version, nested before.
  const backupBlobs = join(backup, 'blobs');
  const backupLayout = blobLayoutOf(backupBlobs);
  const from = (sha256: string, encoding?: Encoding): string => blobPath(backupBlobs, backupLayout, sha256, encoding);
  await inParallel(blobs, async (blob) => {
    const source = from(blob.sha256);
    if ((await sha256Of(source)) !== blob.sha256) throw new Error(`blob ${blob.sha256} in the backup does not match its hash`);
    const copied = await copyChecked(source, target.pathOf(blob.sha256), blob.size);
    blobBytes += copied;
    for (const encoding of ENCODINGS) {
      const size = blob.variants[encoding];
      if (size === undefined) continue;
      const variant = await copyChecked(from(blob.sha256, encoding), target.pathOf(blob.sha256, encoding), size);
      blobBytes += variant;
    }
  });
  await target.flush();

  // The index last, through a temporary name, so it appears whole or not at all.
  const meta = join(dataDir, 'meta');
  // As the store makes it (metadata-dbs.ts): the index holds the service's secrets in clear.
  mkdirSync(meta, { recursive: true, mode: 0o700 });
  const partial = join(meta, 'data.mdb.restoring');
  await copyFile(join(backup, 'meta', 'data.mdb'), partial);
  await fsyncFile(partial);
  await rename(partial, join(meta, 'data.mdb'));
  await fsyncFile(meta);

  const restored = openStore({ dir: dataDir });
  try {
    const { sites, revisions, blobs: referenced } = referencedBlobs(restored);
    for (const blob of referenced) {
      if (!existsSync(restored.blobs.pathOf(blob.sha256))) throw new Error(`restored index references blob ${blob.sha256}, which the backup lacks`);
    }
    return { sites, revisions, blobs: referenced.length, blobBytes, ms: Math.round(performance.now() - started) };
  } finally {
    await restored.close();
  }
}

/** Every blob the revisions of `store` reference, once each, with the variants they record. */
function referencedBlobs(store: Store): { sites: number; revisions: number; blobs: BlobListing[] } {
  const blobs = new Map<string, BlobListing>();
  let revisions = 0;
  const siteIds = store.listSiteIds();
  for (const siteId of siteIds) {
    let before: number | undefined;
    do {
      const page = store.listRevisions(siteId, { before, limit: 500 });
      for (const revision of page.revisions) {
        revisions++;
        for (const file of store.listFiles(revision.id)) {
          const known = blobs.get(file.sha256) ?? { sha256: file.sha256, size: file.size, variants: {} };
          Object.assign(known.variants, file.encodings);
          blobs.set(file.sha256, known);
        }
      }
      before = page.nextBefore;
    } while (before !== undefined);
  }
  return { sites: siteIds.length, revisions, blobs: [...blobs.values()] };
}

/** Copies a file (a reflink where the file system can) and checks the copy's size; returns it. */
async function copyChecked(from: string, to: string, size: number): Promise<number> {
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, to, constants.COPYFILE_FICLONE);
  const copied = (await stat(to)).size;
  if (copied !== size) throw new Error(`${from} has ${copied} bytes where ${size} were recorded`);
  return copied;
}

function sha256Of(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => done(hash.digest('hex')))
      .on('error', fail);
  });
}

async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_COPIES, items.length) }, lane));
}

function requireEmpty(dir: string, what: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${what} ${dir} is not empty`);
}

async function writeDurably(path: string, text: string): Promise<void> {
  await writeFile(`${path}.partial`, text);
  await fsyncFile(`${path}.partial`);
  await rename(`${path}.partial`, path);
  await fsyncFile(dirname(path));
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
