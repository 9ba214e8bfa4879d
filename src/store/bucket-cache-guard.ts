// A cluster node's blob folder is a cache of the bucket, and a deploy's answer waits for the
// bucket (and PostgreSQL), not for this disk: the node does not sync the files its deploys write
// before it answers (a syncfs of a 50 MB site is hundreds of ms of waiting on the disk, with no
// CPU to overlap). That is safe only if a file the disk lost is never served. Lost how: only when
// the machine itself goes down (power loss, kernel crash) before the kernel wrote the pages back;
// a process that dies leaves them in the page cache, and they reach the disk as usual. After such a
// fall a cache file may be missing (fetched again), but also empty, short or zero-filled under
// its right name, which serving would send as it is.
//
// So the folder carries a state file: the boot it was last opened in, and whether the node that
// had it stopped in order (its writes synced). A start that finds another boot's state not marked
// clean knows the machine went down under a running node, and drops every cached file: the
// bucket holds them all, and the cache fills again on demand. Where the boot cannot be told
// (no /proc/sys/kernel/random/boot_id), the guard is off and deploys sync before they answer.
import { readFileSync } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, writeTemp } from './atomic-file.js';
import { createBlobStore } from './blob-store.js';
import { syncFilesystem, type RunSync } from './filesystem-sync.js';

/** In the blob folder; not a blob's name, so listings and the cache trim pass it by. */
export const CACHE_STATE_FILE = 'cache-state.json';
const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

interface CacheState {
  bootId: string;
  /** Every write of the node that last had the folder was synced when it stopped. */
  clean: boolean;
}

export interface GuardOptions {
  /** The running boot's id; read from the kernel when not given (tests give one). */
  bootId?: string | undefined;
  now?: () => number;
}

export interface GuardOutcome {
  /** Whether deploys may answer before their local files are synced (see above). */
  guarded: boolean;
  /** Cached files dropped because the machine went down while a node had unsynced writes. */
  dropped: number;
}

/** The kernel's id of this boot, or undefined where there is none to read. */
export function currentBootId(): string | undefined {
  try {
    const id = readFileSync(BOOT_ID_PATH, 'utf8').trim();
    return id === '' ? undefined : id;
  } catch {
    return undefined;
  }
}

/**
 * At a node's start, before any thread writes blobs: drops the cache if the machine went down
 * while a node had it open with unsynced writes, then records (synced) that this boot has it
 * open, not yet clean. Every write after this is covered: should the machine fall now, the next
 * start sees this state.
 */
export async function guardBlobCache(blobsDir: string, options: GuardOptions = {}): Promise<GuardOutcome> {
  const bootId = 'bootId' in options ? options.bootId : currentBootId();
  if (bootId === undefined) return { guarded: false, dropped: 0 };
  const state = readState(blobsDir);
  let dropped = 0;
  if (state !== undefined && state.bootId !== bootId && !state.clean) {
    const local = createBlobStore({ dir: blobsDir, now: options.now ?? Date.now });
    for await (const file of local.listBlobFiles()) {
      await unlink(file.path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      dropped++;
    }
  }
  await writeState(blobsDir, { bootId, clean: false });
  return { guarded: true, dropped };
}

/**
 * Whether this folder's writes need no sync before a deploy's answer: the guard ran in this boot
 * and no orderly stop has marked it clean since (a clean mark means no node has it open).
 */
export function cacheGuarded(blobsDir: string, bootId: string | undefined = currentBootId()): boolean {
  if (bootId === undefined) return false;
  const state = readState(blobsDir);
  return state !== undefined && state.bootId === bootId && !state.clean;
}

/** At an orderly stop, once nothing writes blobs: syncs the folder's filesystem, then marks it clean. */
export async function markBlobCacheClean(blobsDir: string, options: { bootId?: string | undefined; runSync?: RunSync } = {}): Promise<void> {
  const bootId = 'bootId' in options ? options.bootId : currentBootId();
  if (bootId === undefined) return;
  await syncFilesystem(blobsDir, options.runSync);
  await writeState(blobsDir, { bootId, clean: true });
}

function readState(blobsDir: string): CacheState | undefined {
  let text: string;
  try {
    text = readFileSync(join(blobsDir, CACHE_STATE_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<CacheState>;
    if (typeof parsed.bootId === 'string' && typeof parsed.clean === 'boolean') return { bootId: parsed.bootId, clean: parsed.clean };
  } catch {
    // Unreadable: the state file itself was caught by the fall. Taken as not clean, from no boot.
  }
  return { bootId: '', clean: false };
}

/** Replaced whole and synced (file and folder), so a fall leaves the old state or the new one. */
async function writeState(blobsDir: string, state: CacheState): Promise<void> {
  const tmpDir = join(blobsDir, 'tmp');
  await mkdir(tmpDir, { recursive: true });
  const temp = await writeTemp(tmpDir, Buffer.from(JSON.stringify(state)), true);
  try {
    await rename(temp.path, join(blobsDir, CACHE_STATE_FILE));
  } catch (err) {
    await unlink(temp.path).catch(() => undefined);
    throw err;
  }
  await fsyncDir(blobsDir);
}
