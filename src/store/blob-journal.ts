// A small deploy's blobs, made durable by its revision's own LMDB transaction instead of a sync
// of the filesystem first (issue 35 §4). The ingest worker creates no blob file before the answer:
// the revision's transaction carries the bytes, keyed by sha256 and revision, so the commit's one
// sync makes both durable, in order. After the answer the files are written (temp file and
// rename) and synced, and only then are the rows dropped (`settle`). Until a blob's file exists,
// readers take its bytes from here (`journaledBytes`): the embedded blob store's `readSync` reads
// the row when the file is missing, and its `fetch` writes the file from the row for readers of
// paths. A row always outlives the absence of its file, so a reader that finds neither row nor
// file has a real miss. After a power cut the files may have been lost or left empty; opening the
// store puts them back from the rows (`replayJournal`) before anything reads them.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Database, RootDatabase } from 'lmdb';
import type { BlobStore, JournaledBlob } from './types.js';

/** `[sha256, revisionId]`: found by its blob (readers), each deploy's row apart. */
export type JournalKey = [sha256: string, revisionId: string];

const DB_NAME = 'blobJournal';
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function openBlobJournal(env: RootDatabase): Database<Buffer, JournalKey> {
  return env.openDB<Buffer, JournalKey>(DB_NAME, { encoding: 'binary' });
}

/** The blob of a row; rows of the first layout (`[revisionId, sha256]`) are read too. */
function shaOf(key: JournalKey): string {
  return SHA256_HEX.test(key[0]) ? key[0] : key[1];
}

/** Puts the blobs' rows; call inside the revision's transaction. */
export function putJournaled(journal: Database<Buffer, JournalKey>, revisionId: string, blobs: readonly JournaledBlob[]): void {
  for (const blob of blobs) void journal.put([blob.sha256, revisionId], Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength));
}

/** A journaled blob's bytes (any revision's row: same hash, same bytes); undefined when none. */
export function journaledBytes(journal: Database<Buffer, JournalKey>, sha256: string): Buffer | undefined {
  for (const { key, value } of journal.getRange({ start: [sha256], limit: 1, snapshot: false })) if (key[0] === sha256) return value;
  return undefined;
}

/** The blobs that have rows, for garbage collection to spare. */
export function journaledShas(journal: Database<Buffer, JournalKey>): Set<string> {
  const shas = new Set<string>();
  for (const key of journal.getKeys({ snapshot: false })) shas.add(shaOf(key));
  return shas;
}

/**
 * Makes every journaled blob's file hold its bytes, rewriting (temp file and rename, no fsync:
 * the rows stay until a settle) those that are missing or differ. For opening a store, before
 * anything reads: a power cut may have left a file empty or short. Returns how many it rewrote.
 * Cheap when nothing is journaled (one empty range), as after any clean run.
 */
export function replayJournal(journal: Database<Buffer, JournalKey>, blobs: Pick<BlobStore, 'pathOf'>, tmpDir: string): number {
  let rewritten = 0;
  const tempPrefix = `${process.pid}-${threadId}-${randomBytes(4).toString('hex')}-journal-`;
  for (const { key, value } of journal.getRange({ snapshot: false })) {
    const path = blobs.pathOf(shaOf(key));
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
 * Writes a journaled blob's file unless it is there (temp file and rename, no fsync: its row keeps
 * it durable until a settle). In a running system a file at its final path is complete (only a
 * rename puts it there), so its presence is enough. False when it was there already.
 */
export async function placeJournaled(path: string, bytes: Uint8Array, tmpDir: string): Promise<boolean> {
  if (statSync(path, { throwIfNoEntry: false }) !== undefined) return false;
  const temp = join(tmpDir, `${process.pid}-${threadId}-${randomBytes(6).toString('hex')}-place.tmp`);
  try {
    await writeFile(temp, bytes, { mode: 0o644 });
    await mkdir(dirname(path), { recursive: true });
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  return true;
}

/**
 * Drops the rows seen now once their files are on disk: each row's file is written first if it is
 * not there yet (the deploy's worker normally wrote them all; this covers a compression task that
 * never ran), then `flush` (a sync of the blob filesystem) makes them durable, then the rows go.
 * Rows committed meanwhile wait for the next settle. Returns how many were dropped.
 */
export async function settleJournal(
  env: RootDatabase,
  journal: Database<Buffer, JournalKey>,
  blobs: Pick<BlobStore, 'pathOf'>,
  tmpDir: string,
  flush: () => Promise<void>,
): Promise<number> {
  const keys = [...journal.getKeys({ snapshot: false })];
  if (keys.length === 0) return 0;
  for (const key of keys) {
    const path = blobs.pathOf(shaOf(key));
    if (statSync(path, { throwIfNoEntry: false }) !== undefined) continue;
    const bytes = journal.get(key);
    if (bytes !== undefined) await placeJournaled(path, bytes, tmpDir);
  }
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
