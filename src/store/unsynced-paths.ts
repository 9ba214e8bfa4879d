// What a blob store wrote without an fsync since its last flush, so that the flush can make just
// those durable (an fsync of each file, and of each folder whose entries changed) instead of
// syncing the whole filesystem. bench/RESULTS.md, "Deploys: the 1 MB site, second pass", has
// the measurements behind the choice and the cap.
import { dirname } from 'node:path';

/** At most this many files a flush makes durable one by one; past it, one filesystem sync. */
export const MAX_FILES_SYNCED_ONE_BY_ONE = 256;

export interface UnsyncedPaths {
  /** A file renamed into `folder`; `created`: the first folder `mkdir -p` of `folder` made, if any. */
  placed(path: string, created?: string): void;
  /**
   * An existing blob taken instead of writing it again. Its writer (another thread, another
   * deploy) may not have flushed it yet: it, its variants that exist when the flush comes, and
   * every folder from its own up to the blob root are made durable with this flush.
   */
  reused(path: string, variants: readonly string[]): void;
  /** Written in a way this list does not follow: the flush syncs the whole filesystem. */
  unlisted(): void;
  /**
   * The files, then the folders, to fsync, and a fresh start; undefined when the flush must sync
   * the whole filesystem instead: too many files, some unlisted, or none noted (a caller that
   * wrote files itself, as a restore does, counts on the whole filesystem).
   */
  take(): string[] | undefined;
}

/** `root`: the blob folder, whose parent is never synced. `exists`: whether a path exists. */
export function createUnsyncedPaths(root: string, exists: (path: string) => boolean, maxFiles = MAX_FILES_SYNCED_ONE_BY_ONE): UnsyncedPaths {
  let files = new Set<string>();
  let variantsMaybe = new Set<string>();
  let folders = new Set<string>();
  let whole = false;
  const following = (): boolean => !whole && files.size <= maxFiles;
  return {
    placed(path, created) {
      if (!following()) return;
      files.add(path);
      const folder = dirname(path);
      folders.add(folder);
      // Each folder made is an entry of its parent, which must survive a crash too.
      if (created !== undefined) for (let made = folder; made !== dirname(created); made = dirname(made)) folders.add(dirname(made));
    },
    reused(path, variants) {
      if (!following()) return;
      files.add(path);
      for (const variant of variants) variantsMaybe.add(variant);
      for (let folder = dirname(path); folder !== dirname(root) && folder !== dirname(folder); folder = dirname(folder)) folders.add(folder);
    },
    unlisted() {
      whole = true;
    },
    take() {
      // A reused blob's variants are looked for now: any the deploy found and recorded exists.
      const paths = !following() || files.size === 0 ? undefined : [...files, ...[...variantsMaybe].filter(exists), ...folders];
      files = new Set();
      variantsMaybe = new Set();
      folders = new Set();
      whole = false;
      return paths;
    },
  };
}
