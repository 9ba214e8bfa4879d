import { unlink } from 'node:fs/promises';
import type { MetadataDbs } from './metadata-dbs.js';
import type { BlobStore } from './types.js';

/**
 * Mark and sweep over the blob files.
 *
 * MARK reads every path row (`snapshot: false`: a long scan must not pin old pages) into a set
 * of referenced hashes. SWEEP walks the blob files and deletes each hash that is not in the set,
 * with its `.br`/`.gz` variants, when its newest file is older than `graceMs`.
 *
 * Why no fresh re-check right before each delete is needed: a hash can become referenced after
 * MARK has passed only through a commit that was not visible yet, i.e.
 * - a deploy in flight: its blobs are written before its commit, and a blob it reuses instead of
 *   writing is touched (`writeSync`, `write`), so either way the file is younger than the grace
 *   period (which must exceed the longest deploy), and its variants are judged with it;
 * - a rollback: it copies rows of a revision that still exists, and those rows were marked.
 *   `pruneRevisions` only drops revisions past the plan's reach, which a rollback cannot choose,
 *   and the sweeper runs it before, not during, collection; a revision an owner deletes meanwhile
 *   fails the rollback's commit, which checks that its source still exists (commit.ts).
 * - a small deploy answered before its files were written (blob-journal.ts): its blobs have
 *   journal rows until their files are synced, and `kept` names them.
 * What remains is the gap between reading a file's mtime and unlinking it (a deploy touching a
 * blob exactly then), which a re-read of the index would not close either.
 * Fan-out folders are never removed: `writeSync` remembers which ones exist.
 */
export async function collectGarbage(
  dbs: MetadataDbs,
  blobs: BlobStore,
  graceMs: number,
  now: () => number,
  /** Kept whatever the paths say: parts of manifests still uploading, blobs waiting in the journal. */
  kept: () => Set<string>,
): Promise<number> {
  // A backup is copying the blobs of its snapshot; the next sweep collects instead.
  if (blobs.isPinned()) return 0;
  const referenced = new Set<string>();
  for (const { value } of dbs.paths.getRange({ snapshot: false })) referenced.add(value.sha256);
  // Parts of a manifest still waiting for the rest of its upload are kept until it expires.
  for (const sha256 of kept()) referenced.add(sha256);

  const cutoff = now() - graceMs;
  const unreferenced = new Map<string, { paths: string[]; newestMs: number }>();
  for await (const file of blobs.listBlobFiles()) {
    if (referenced.has(file.sha256)) continue;
    const group = unreferenced.get(file.sha256) ?? { paths: [], newestMs: 0 };
    group.paths.push(file.path);
    group.newestMs = Math.max(group.newestMs, file.mtimeMs);
    unreferenced.set(file.sha256, group);
  }

  let deleted = 0;
  for (const group of unreferenced.values()) {
    if (group.newestMs > cutoff) continue;
    // Checked again before each delete: a backup may have started since the mark.
    if (blobs.isPinned()) break;
    for (const path of group.paths) {
      try {
        await unlink(path);
        deleted++;
      } catch (err) {
        // Another collector (the admin CLI's process) got there first.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
  return deleted;
}
