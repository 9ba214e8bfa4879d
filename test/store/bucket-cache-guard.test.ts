import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCollector } from '../../src/ingest/collector.js';
import { createBlobStore } from '../../src/store/blob-store.js';
import { CACHE_STATE_FILE, cacheGuarded, currentBootId, guardBlobCache, markBlobCacheClean } from '../../src/store/bucket-cache-guard.js';
import { forkSync } from '../../src/store/filesystem-sync.js';

/**
 * A cluster node's deploys answer before their local blob files are synced (the bucket holds
 * them first). The guard makes sure that a file the disk lost when the machine went down is never
 * served: such a fall is told by a state file from another boot not marked clean, and drops the
 * cache, which the bucket refills on demand.
 */

const root = mkdtempSync(join(tmpdir(), 'plinth-cache-guard-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
/** A blob folder with a whole, a short and an empty cached file, as a fall may leave them. */
async function cacheWithFiles(): Promise<{ dir: string; paths: string[] }> {
  const dir = join(root, `blobs-${dirs++}`);
  const blobs = createBlobStore({ dir, now: Date.now });
  const paths: string[] = [];
  for (const text of ['whole', 'short one', 'empty one']) {
    const bytes = Buffer.from(`<p>${text}</p>`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    blobs.writeSync(bytes, sha256);
    paths.push(blobs.pathOf(sha256));
  }
  truncateSync(paths[1]!, 3);
  truncateSync(paths[2]!, 0);
  return { dir, paths };
}
const state = (dir: string): unknown => JSON.parse(readFileSync(join(dir, CACHE_STATE_FILE), 'utf8'));

describe('the blob cache guard', () => {
  it('on a first start keeps the cache and records this boot, open', async () => {
    const { dir, paths } = await cacheWithFiles();
    expect(await guardBlobCache(dir, { bootId: 'boot-a' })).toEqual({ guarded: true, dropped: 0 });
    for (const path of paths) expect(existsSync(path)).toBe(true);
    expect(state(dir)).toEqual({ bootId: 'boot-a', clean: false });
    expect(cacheGuarded(dir, 'boot-a')).toBe(true);
    expect(cacheGuarded(dir, 'boot-b')).toBe(false);
  });

  it('keeps the cache after a process died in the same boot: its writes were in the page cache', async () => {
    const { dir, paths } = await cacheWithFiles();
    await guardBlobCache(dir, { bootId: 'boot-a' });
    // No orderly stop: the state stays open. The same boot starts the node again.
    expect(await guardBlobCache(dir, { bootId: 'boot-a' })).toEqual({ guarded: true, dropped: 0 });
    for (const path of paths) expect(existsSync(path)).toBe(true);
  });

  it('keeps the cache after an orderly stop and a reboot: the stop synced it', async () => {
    const { dir, paths } = await cacheWithFiles();
    await guardBlobCache(dir, { bootId: 'boot-a' });
    let syncs = 0;
    await markBlobCacheClean(dir, {
      bootId: 'boot-a',
      runSync: async (at) => {
        syncs++;
        await forkSync(at);
      },
    });
    expect(syncs).toBe(1);
    expect(state(dir)).toEqual({ bootId: 'boot-a', clean: true });
    expect(cacheGuarded(dir, 'boot-a')).toBe(false);
    expect(await guardBlobCache(dir, { bootId: 'boot-b' })).toEqual({ guarded: true, dropped: 0 });
    for (const path of paths) expect(existsSync(path)).toBe(true);
    expect(state(dir)).toEqual({ bootId: 'boot-b', clean: false });
  });

  it('drops every cached file when the machine went down under a running node (another boot, not clean)', async () => {
    const { dir, paths } = await cacheWithFiles();
    await guardBlobCache(dir, { bootId: 'boot-a' });
    expect(await guardBlobCache(dir, { bootId: 'boot-b' })).toEqual({ guarded: true, dropped: 3 });
    // The short and the empty file too: none is left for serving to send.
    for (const path of paths) expect(existsSync(path)).toBe(false);
    expect(state(dir)).toEqual({ bootId: 'boot-b', clean: false });
    // The folder still works as a cache.
    const blobs = createBlobStore({ dir, now: Date.now });
    const bytes = Buffer.from('<p>again</p>');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    blobs.writeSync(bytes, sha256);
    expect(readFileSync(blobs.pathOf(sha256))).toEqual(bytes);
  });

  it('takes a state file the fall damaged as not clean', async () => {
    const { dir, paths } = await cacheWithFiles();
    writeFileSync(join(dir, CACHE_STATE_FILE), '');
    expect(await guardBlobCache(dir, { bootId: 'boot-a' })).toEqual({ guarded: true, dropped: 3 });
    for (const path of paths) expect(existsSync(path)).toBe(false);
  });

  it('is off where the boot cannot be told: nothing dropped or recorded, and deploys sync as before', async () => {
    const { dir, paths } = await cacheWithFiles();
    expect(await guardBlobCache(dir, { bootId: undefined })).toEqual({ guarded: false, dropped: 0 });
    expect(existsSync(join(dir, CACHE_STATE_FILE))).toBe(false);
    expect(cacheGuarded(dir, undefined)).toBe(false);
    await markBlobCacheClean(dir, { bootId: undefined });
    expect(existsSync(join(dir, CACHE_STATE_FILE))).toBe(false);
    for (const path of paths) expect(existsSync(path)).toBe(true);
  });

  it('reads this machine’s boot id on Linux', () => {
    if (process.platform !== 'linux') return;
    expect(currentBootId()).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('an unpack of blobs durable elsewhere', () => {
  it('leaves their files unsynced with syncBlobs false, and syncs them otherwise', async () => {
    const blobs = createBlobStore({ dir: join(root, 'collector'), now: Date.now });
    let syncs = 0;
    const runSync = async (dir: string): Promise<void> => {
      syncs++;
      await forkSync(dir);
    };
    const limits = { maxFiles: 10, maxFileBytes: 64 * 1024, maxSiteBytes: 64 * 1024 };
    const collect = async (syncBlobs: boolean | undefined, content: string) => {
      const collector = createCollector({ blobs, limits, blockExecutables: false, runSync, ...(syncBlobs !== undefined ? { syncBlobs } : {}) });
      collector.admit('index.html', 'file');
      await collector.addBytes('index.html', Buffer.from(content));
      return collector.finish({ patch: false });
    };
    const cached = await collect(false, '<p>in the bucket before the answer</p>');
    expect(syncs).toBe(0);
    expect(existsSync(blobs.pathOf(cached.files[0]!.sha256))).toBe(true);
    await collect(undefined, '<p>the only copy</p>');
    expect(syncs).toBe(1);
  });
});
