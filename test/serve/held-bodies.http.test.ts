import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBodyCache } from '../../src/serve/bodies.js';
import { createSiteCache, type HeldBytes, type Ready, type Target } from '../../src/serve/site-cache.js';
import { openStore } from '../../src/store/index.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { publishSite, storeFiles, tempDir } from '../helpers/sites.js';

// The prepared path keeps a page's bytes on its target's `Ready`, beside the body cache's entry.
// The cache's weight must stay the truth: bytes it evicts or deletes go from every target that
// holds them (no stale answer, no memory past the budget), and so do the bytes of targets the
// site cache drops.

const shared = randomBytes(300 * 1024);
const bytesOf = (held: HeldBytes): Buffer => (held instanceof ArrayBuffer ? Buffer.from(held) : held);
const filler = randomBytes(800 * 1024);

describe('bodies held by targets, served', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const get = (site: string, path: string) => request({ port: server!.port, host: `${site}.sites.localhost`, path });

  it('serves a body two sites share after it was evicted once, and a redeploy or removal at once', async () => {
    server = await startTestServer({ PLINTH_CACHE_MB: '1' });
    const { store } = server;
    const { revision } = await publishSite(store, 'held-a', { 'index.html': '<p>a</p>', 'shared.bin': shared });
    await publishSite(store, 'held-b', { 'index.html': '<p>b</p>', 'shared.bin': shared });
    await publishSite(store, 'held-c', { 'filler.bin': filler });
    for (let i = 0; i < 2; i++) for (const site of ['held-a', 'held-b']) expect((await get(site, '/shared.bin')).body.equals(shared)).toBe(true);
    // Held once: the two targets hold the cache's one copy.
    expect(server.stats().cache.bodyBytes).toBe(shared.byteLength);

    expect((await get('held-c', '/filler.bin')).body.equals(filler)).toBe(true);
    expect(server.stats().cache.bodyBytes).toBe(filler.byteLength);
    for (const site of ['held-a', 'held-b']) expect((await get(site, '/shared.bin')).body.equals(shared)).toBe(true);
    expect(server.stats().cache.bodyBytes).toBeLessThanOrEqual(1024 * 1024);

    const changed = randomBytes(300 * 1024);
    const files = await storeFiles(store, { 'index.html': '<p>a</p>', 'shared.bin': changed });
    expect((await store.commitRevision({ site: 'held-a', baseRevision: revision, files, kind: 'deploy', createdBy: 'admin' })).ok).toBe(true);
    expect((await get('held-a', '/shared.bin')).body.equals(changed)).toBe(true);
    expect((await get('held-b', '/shared.bin')).body.equals(shared)).toBe(true);

    await store.setSiteState('held-b', 'deleted');
    expect((await get('held-b', '/shared.bin')).status).toBe(410);
    expect((await get('held-a', '/shared.bin')).body.equals(changed)).toBe(true);
  });
});

describe('bodies held by targets, in memory', () => {
  const dir = tempDir();
  const store = openStore({ dir });
  afterAll(() => store.close());
  const serveConfig = (env: Record<string, string>) => loadConfig({ PLINTH_DATA_DIR: dir, ...env }).serve;
  const readyOf = (target: Target): Ready => {
    const ready: Ready = {
      size: target.entry!.size,
      full: Buffer.alloc(0),
      notModified: Buffer.alloc(0),
      etag: '',
      held: undefined,
      used: false,
      heldFrom: undefined,
    };
    target.identity = ready;
    return ready;
  };
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const collected = async (weak: WeakRef<object>): Promise<boolean> => {
    // A WeakRef keeps its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    return weak.deref() === undefined;
  };

  it('takes a body two sites share back from both once it is evicted, and lets it go', async () => {
    for (const name of ['mem-a', 'mem-b']) await publishSite(store, name, { 'shared.bin': shared });
    const { revision } = await publishSite(store, 'mem-c', { 'filler.bin': filler });
    const config = serveConfig({ PLINTH_CACHE_MB: '1' });
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const targets = ['mem-a', 'mem-b'].map((name) => {
      const cached = sites.lookup(name)!;
      return sites.target(cached, cached.site.liveRevision!, '/shared.bin', '');
    });
    const readies = targets.map(readyOf);
    const weak = (() => {
      const bytes = readies.map((ready, i) => bodies.hold(ready, targets[i]!, undefined));
      expect(bytes[0]).toBe(bytes[1]);
      expect(bytesOf(bytes[0]!).equals(shared)).toBe(true);
      expect(readies.every((ready) => ready.held === bytes[0])).toBe(true);
      return new WeakRef(bytes[0]!);
    })();
    expect(bodies.weight).toBe(shared.byteLength);

    const fillerTarget = sites.target(sites.lookup('mem-c')!, revision, '/filler.bin', '');
    bodies.blob(fillerTarget.entry!, undefined);
    expect(bodies.weight).toBe(filler.byteLength);
    expect(readies.every((ready) => ready.held === undefined)).toBe(true);
    expect(await collected(weak)).toBe(true);

    // Read again on the next request, and held again.
    expect(bytesOf(bodies.hold(readies[0]!, targets[0]!, undefined)).equals(shared)).toBe(true);
    expect(readies[0]!.held).toBeDefined();
  });

  it('takes the bodies back from the targets of a site the site cache drops', async () => {
    const { revision } = await publishSite(store, 'mem-d', { 'shared.bin': shared });
    const config = serveConfig({});
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const target = sites.target(sites.lookup('mem-d')!, revision, '/shared.bin', '');
    const ready = readyOf(target);
    const weak = new WeakRef(bodies.hold(ready, target, undefined));
    expect(ready.held).toBeDefined();

    const files = await storeFiles(store, { 'index.html': '<p>moved on</p>' });
    expect((await store.commitRevision({ site: 'mem-d', baseRevision: revision, files, kind: 'deploy', createdBy: 'admin' })).ok).toBe(true);
    expect(ready.held).toBeUndefined();
    expect(target.keepsBodies).toBe(false);
    expect(bodies.weight).toBe(0);
    expect(await collected(weak)).toBe(true);
    // A dropped target's representations hold nothing any more, even when asked again.
    bodies.hold(ready, target, undefined);
    expect(ready.held).toBeUndefined();
  });

  it('takes the bodies back from the targets cleared at the cap of resolved URLs per site', async () => {
    const { revision } = await publishSite(store, 'mem-f', { 'shared.bin': shared });
    const config = serveConfig({});
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const cached = sites.lookup('mem-f')!;
    const target = sites.target(cached, revision, '/shared.bin', '');
    const ready = readyOf(target);
    bodies.hold(ready, target, undefined);
    expect(ready.held).toBeDefined();
    // 10,000 resolved URLs per site: the next one clears them all.
    for (let i = 0; cached.targets.has('/shared.bin'); i++) sites.target(cached, revision, `/missing-${i}.png`, '');
    expect(ready.held).toBeUndefined();
    expect(target.keepsBodies).toBe(false);
    // Still in the body cache, for the next target that asks.
    expect(bodies.weight).toBe(shared.byteLength);
  });

  it('keeps a larger body in a buffer of its own, held as that whole ArrayBuffer', async () => {
    // A file under 8 KB is read into a slice of Node's shared pool; the cache copies it out.
    const larger = randomBytes(6 * 1024);
    const { revision } = await publishSite(store, 'mem-g', { 'larger.bin': larger });
    const config = serveConfig({});
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const target = sites.target(sites.lookup('mem-g')!, revision, '/larger.bin', '');
    const blob = bodies.blob(target.entry!, undefined);
    expect(blob.byteOffset).toBe(0);
    expect(blob.buffer.byteLength).toBe(larger.byteLength);
    const ready = readyOf(target);
    const held = bodies.hold(ready, target, undefined);
    expect(held).toBe(blob.buffer);
    expect(ready.held).toBe(held);
    expect(bytesOf(held).equals(larger)).toBe(true);
    expect(bodies.weight).toBe(larger.byteLength);
  });

  it('packs small bodies side by side in a slab, counted whole until its last body leaves', async () => {
    const smalls = Array.from({ length: 10 }, () => randomBytes(2048));
    const files = Object.fromEntries(smalls.map((bytes, i) => [`small-${i}.bin`, bytes]));
    const { revision } = await publishSite(store, 'mem-h', files);
    const config = serveConfig({});
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const cached = sites.lookup('mem-h')!;
    const targets = smalls.map((_, i) => sites.target(cached, revision, `/small-${i}.bin`, ''));
    const readies = targets.map(readyOf);
    const held = readies.map((ready, i) => bodies.hold(ready, targets[i]!, undefined) as Buffer);
    held.forEach((bytes, i) => {
      expect(bytes).toBeInstanceOf(Buffer);
      expect(bytes.equals(smalls[i]!)).toBe(true);
      expect(readies[i]!.held).toBe(bytes);
    });
    // Eight 2 KB bodies fill a 16 KB slab; the ninth starts the next.
    expect(new Set(held.map((bytes) => bytes.buffer)).size).toBe(2);
    expect(held[1]!.buffer).toBe(held[0]!.buffer);
    expect(held[8]!.buffer).not.toBe(held[7]!.buffer);
    expect(bodies.weight).toBe(2 * 16 * 1024);
    // A redeploy drops them all: nothing counted after.
    const next = await storeFiles(store, { 'index.html': '<p>moved on</p>' });
    expect((await store.commitRevision({ site: 'mem-h', baseRevision: revision, files: next, kind: 'deploy', createdBy: 'admin' })).ok).toBe(true);
    expect(readies.every((ready) => ready.held === undefined)).toBe(true);
    expect(bodies.weight).toBe(0);
  });

  it('keeps within its budget, slabs counted whole, however small bodies come and go', async () => {
    const pages = Array.from({ length: 600 }, (_, i) => randomBytes(1024 + (i % 7) * 300));
    const files = Object.fromEntries(pages.map((bytes, i) => [`p-${i}.bin`, bytes]));
    const { revision } = await publishSite(store, 'mem-i', files);
    const budget = 1024 * 1024;
    const config = serveConfig({ PLINTH_CACHE_MB: '1' });
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    const cached = sites.lookup('mem-i')!;
    const targets = pages.map((_, i) => sites.target(cached, revision, `/p-${i}.bin`, ''));
    const readies = targets.map(readyOf);
    // Every 20th page is asked for again and again while the rest come and go, three times over:
    // survivors end up scattered over slabs whose other bodies were evicted.
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < pages.length; i++) {
        expect(bytesOf(bodies.hold(readies[i]!, targets[i]!, undefined)).equals(pages[i]!)).toBe(true);
        if (i % 20 === 0) for (let k = 0; k <= i; k += 20) readies[k]!.used = true;
        expect(bodies.weight).toBeLessThanOrEqual(budget);
      }
    // The memory the held bodies keep alive is within the weight counted.
    const slabs = new Set(readies.flatMap((ready) => (ready.held === undefined ? [] : [(ready.held as Buffer).buffer])));
    expect(slabs.size).toBeGreaterThan(0);
    expect([...slabs].reduce((sum, slab) => sum + slab.byteLength, 0)).toBeLessThanOrEqual(bodies.weight);
    expect(readies.filter((ready, i) => i % 20 === 0 && ready.held !== undefined).length).toBeGreaterThan(0);
  });

  it('lets no target hold bytes for a site the site cache cannot keep', async () => {
    const { revision } = await publishSite(store, 'mem-e', { 'shared.bin': shared });
    const config = serveConfig({ PLINTH_SITE_CACHE_MB: '0' });
    const bodies = createBodyCache(store, config);
    const sites = createSiteCache(store, config, bodies);
    for (let i = 0; i < 3; i++) {
      const target = sites.target(sites.lookup('mem-e')!, revision, '/shared.bin', '');
      const ready = readyOf(target);
      expect(bytesOf(bodies.hold(ready, target, undefined)).equals(shared)).toBe(true);
      expect(ready.held).toBeUndefined();
    }
    expect(bodies.weight).toBe(shared.byteLength);
  });
});
