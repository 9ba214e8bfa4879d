// A small deploy's blobs, made durable by its revision's own LMDB transaction instead of a sync
// of the filesystem first (issue 35 §4). The ingest worker still writes every blob as a file
// (without fsync), so every reader of blobs (serving and `sendfile`, the compressor, GC, backup,
// migration) reads files as before; the revision's transaction also carries the bytes, keyed by
// the revision, so the commit's one sync makes both durable, in order. Once a later sync of the
// filesystem has written the files out, those rows are dropped (`settle`). After a power cut the
// files may have been lost or left empty; opening the store puts them back from the rows
// (`replay`) before anything reads them.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Database, RootDatabase } from 'lmdb';
import type { BlobStore, JournaledBlob } from './types.js';

/** `[revisionId, sha256]`: each deploy's rows apart, so a settle drops only rows it saw synced. */
export type JournalKey = [revisionId: string, sha256: string];

const DB_NAME = 'blobJournal';

export function openBlobJournal(env: RootDatabase): Database<Buffer, JournalKey> {
  return env.openDB<Buffer, JournalKey>(DB_NAME, { encoding: 'binary' });
}

/** Puts the blobs' rows; call inside the revision's transaction. */
export function putJournaled(journal: Database<Buffer, JournalKey>, revisionId: string, blobs: readonly JournaledBlob[]): void {
  for (const blob of blobs) void journal.put([revisionId, blob.sha256], Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength));
}

/**
 * Makes every journaled blob's file hold its bytes, rewriting (temp file and rename, no fsync:
 * the rows stay until a settle) those that are missing or differ. Returns how many it rewrote.
 * Cheap when nothing is journaled (one empty range), as after any clean run.
 */
export function replayJournal(journal: Database<Buffer, JournalKey>, blobs: Pick<BlobStore, 'pathOf'>, tmpDir: string): number {
  let rewritten = 0;
  const tempPrefix = `${process.pid}-${threadId}-${randomBytes(4).toString('hex')}-journal-`;
  for (const { key, value } of journal.getRange({ snapshot: false })) {
    const path = blobs.pathOf(key[1]);
    if (holds(path, value)) continue;
    const temp = join(tmpDir, `${tempPrefix}${rewritten}.tmp`);
    try {
      writeFileSync(temp, value, { mode: 0o644 });
      // A nested store's `aa/bb` folder may have been lost with the file.
      mkdirSync(dirname(path), { recursive: true });
      renameSync(temp, path);
    } catch (err) {
      rmSync(temp, { force: true });
      throw err;
    }
    rewritten++;
  }
  return rewritten;
}

function holds(path: string, bytes: Buffer): boolean {
  try {
    return readFileSync(path).equals(bytes);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Drops the rows whose files are on disk: those present before `flush` (a sync of the blob
 * filesystem) started, since their files were written before their commit. Rows committed
 * meanwhile wait for the next settle. Returns how many were dropped.
 */
export async function settleJournal(env: RootDatabase, journal: Database<Buffer, JournalKey>, flush: () => Promise<void>): Promise<number> {
  const keys = [...journal.getKeys({ snapshot: false })];
  if (keys.length === 0) return 0;
  await flush();
  await env.transaction(() => {
    for (const key of keys) void journal.remove(key);
  });
  return keys.length;
}

/** Rows still waiting for a settle (for tests and the operator's view). */
export function journaledCount(journal: Database<Buffer, JournalKey>): number {
  return journal.getKeysCount();
}
