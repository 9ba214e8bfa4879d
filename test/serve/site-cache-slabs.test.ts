import { rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBodyCache } from '../../src/serve/bodies.js';
import { blobEtag, fileHeaders, notModifiedHeaders } from '../../src/serve/headers.js';
import { createSiteCache, type CachedSite, type SiteCache, type Target } from '../../src/serve/site-cache.js';
import { openStore } from '../../src/store/index.js';
import { publishSite, tempDir } from '../helpers/sites.js';

// A target's header blocks are packed side by side into slabs (headers.ts `packedAfterFirst`); a
// slab lives as long as any block in it. The site cache's budget must count that memory: however
// its sites come and go, the slabs its kept targets keep alive are within its counted weight.

const dir = tempDir();
const store = openStore({ dir });
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Both header blocks of a target's identity answer, made as the prepared path makes them. */
const prepare = (sites: SiteCache, cached: CachedSite, target: Target): void => {
  const entry = target.entry!;
  const etag = blobEtag(entry.sha256);
  const answer = { type: entry.type, cacheControl: target.cacheControl, varies: false, etag, ranges: false };
  target.full = sites.pack(cached, fileHeaders(answer));
  target.notModified = sites.pack(cached, notModifiedHeaders(answer));
};

it('counts the header slabs its kept targets keep alive, and keeps them within its budget', async () => {
  const names = Array.from({ length: 240 }, (_, i) => `slab-${i}`);
  const revisions = new Map<string, string>();
  for (const name of names) revisions.set(name, (await publishSite(store, name, { 'index.html': `<p>${name}</p>` })).revision);
  const budget = 32 * 1024;
  const config = { ...loadConfig({ PLINTH_DATA_DIR: dir }).serve, siteCacheBytes: budget };
  const bodies = createBodyCache(store, config);
  const sites = createSiteCache(store, config, bodies);
  // Every 40th site is asked for again and again, so it stays while the others come and go:
  // its blocks end up scattered among those of sites long evicted.
  const seen: CachedSite[] = [];
  const keepers = names.filter((_, i) => i % 40 === 0);
  for (const [i, name] of names.entries()) {
    const cached = sites.lookup(name)!;
    seen.push(cached);
    prepare(sites, cached, sites.target(cached, revisions.get(name)!, '/', ''));
    for (const keeper of keepers.slice(0, Math.floor(i / 40) + 1)) sites.lookup(keeper);
  }
  const kept = seen.filter((cached) => cached.kept);
  expect(kept.length).toBeGreaterThan(keepers.length);
  expect(kept.length).toBeLessThan(names.length);
  const slabs = new Set<ArrayBufferLike>();
  for (const cached of kept) for (const target of cached.targets.values()) slabs.add(target.full.buffer).add(target.notModified.buffer);
  const slabBytes = [...slabs].reduce((sum, slab) => sum + slab.byteLength, 0);
  expect(slabBytes).toBeLessThanOrEqual(sites.weight);
  expect(sites.weight).toBeLessThanOrEqual(budget);
});

it("counts a site's header slabs until its targets go, at the cap of resolved URLs too", async () => {
  const { revision } = await publishSite(store, 'slab-cap', { 'index.html': '<p>cap</p>' });
  const config = loadConfig({ PLINTH_DATA_DIR: dir }).serve;
  const bodies = createBodyCache(store, config);
  const sites = createSiteCache(store, config, bodies);
  const cached = sites.lookup('slab-cap')!;
  const empty = sites.weight;
  const first = sites.target(cached, revision, '/', '');
  const withTarget = sites.weight;
  prepare(sites, cached, first);
  // The slab its blocks went into, whole.
  expect(sites.weight - withTarget).toBe(first.full.buffer.byteLength);
  expect(first.notModified.buffer).toBe(first.full.buffer);
  // 10,000 resolved URLs per site: the next one clears them all, their slabs' weight with them.
  for (let i = 0; cached.targets.has('/'); i++) sites.target(cached, revision, `/missing-${i}.png`, '');
  const next = sites.target(cached, revision, '/', '');
  const before = sites.weight;
  prepare(sites, cached, next);
  expect(next.full.buffer).not.toBe(first.full.buffer);
  expect(sites.weight - before).toBe(next.full.buffer.byteLength);
  expect(sites.weight).toBeGreaterThan(empty);
});
