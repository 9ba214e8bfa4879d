import type { ServeConfig } from '../config.js';
import {
  ENCODINGS,
  headersFor,
  isHtmlType,
  servableHeaders,
  wantsVariants,
  type CompiledHeaders,
  type CompiledRedirects,
  type Encoding,
  type SiteHeaders,
} from '../rules/index.js';
import { VARIANT_ON_DEMAND_MAX_BYTES, type BlobStore, type FileEntry, type SiteRecord, type Store } from '../store/index.js';
import { cacheControlFor, newBlockSlabs, packedAfterFirst, type BlockSlabs, type HeaderList } from './headers.js';
import { withGetters } from './fast-object.js';
import { createLruCache, type LruHolder } from './lru-cache.js';
import { normalizeRequestPath } from './request-path.js';
import { resolveSitePath } from './resolve.js';

/**
 * Steps one and two of serving a request: the site (its record, as this thread last read it) and
 * the target (where a URL of its live revision leads), both cached per thread within a byte
 * budget and forgotten when the site changes.
 */

/**
 * All that serving reads of the store: a site by name, a file of a revision by path, blob bytes,
 * and the feed of site changes. Synchronous reads only; the hot path never awaits.
 */
export type SiteReader = Pick<Store, 'getSite' | 'getFile' | 'getRevisionExtras' | 'onSiteChanged' | 'siteChangesElsewhere'> & {
  readonly blobs: Pick<BlobStore, 'readSync' | 'pathOf' | 'isLocal' | 'fetch'>;
};

/**
 * Where one URL of one revision leads, with what the response needs precomputed. Revisions are
 * immutable, so a target never goes stale while its revision is live. Its own `Ready` fields are
 * its identity representation once that is prepared (`identity` is then the target itself).
 */
export interface Target extends Ready {
  /** 410: a `_redirects` rule says gone (with its page as `entry`, or the plain page). */
  status: 200 | 404 | 410;
  entry?: FileEntry;
  /** A redirect (a folder without its slash, or `_redirects`): no entry, no body. */
  redirect?: { status: number; location: string; ownQuery: boolean };
  /** What the site's `_headers` give this path. */
  site?: SiteHeaders;
  /** Set when the URL itself is bad (400) or too long (414). */
  error?: 400 | 414;
  html: boolean;
  cacheControl: string;
  encodings: readonly Encoding[];
  /** `encodings` is not empty: the answer varies with Accept-Encoding (read without touching the list). */
  varies: boolean;
  /**
   * The file's variants are not recorded yet (its deploy's compressor makes them right after the
   * answer): `encodings` offers gzip, made from the blob on its first request (bodies.ts
   * `unrecorded`), until the site's record is read again with them.
   */
  unrecorded: boolean;
  /**
   * The prepared path's whole answer per representation, built on first use: a request reads its
   * target and one of these, nothing else of the site's (see `Ready`). The identity one is the
   * target itself, once prepared: across many pages, one object fewer in the CPU's caches per
   * request (bench/RESULTS.md, "Serving back at the ceiling", twelfth pass).
   */
  identity: Ready | undefined;
  br: Ready | undefined;
  gzip: Ready | undefined;
  /**
   * The target is in the site cache, whose dropping it the body cache hears of: its `Ready`s may
   * hold their bytes (bodies.ts `hold`). False for a site the cache could not keep.
   */
  keepsBodies: boolean;
}

/**
 * One representation of a target as the prepared path sends it: its size, its header blocks as
 * one `writeHeader` value each (see headers.ts `joinAfterFirst`), and its bytes (`held`, once
 * read). Kept on the target so that a request across many pages touches few objects: target,
 * `Ready`, header block and bytes. The bytes stay the body cache's, within its budget: it takes
 * them back from every `Ready` holding them when it evicts or deletes them (lru-cache.ts `hold`).
 */
/** A body as a `Ready` holds it: its own whole `ArrayBuffer`, or its view of a shared slab (bodies.ts). */
export type HeldBytes = ArrayBuffer | Buffer;

export interface Ready extends LruHolder<HeldBytes> {
  size: number;
  /** For 200/404 with a body: everything after "Content-Type: " (headers.ts `packedAfterFirst`). */
  full: Buffer;
  /** For 304: everything after "ETag: ". */
  notModified: Buffer;
  etag: string;
}

/** A site record as this thread last read it, with the targets of its live revision. */
export interface CachedSite {
  /** Key in the site cache (the name it was asked for). */
  key: string;
  site: SiteRecord;
  /** Read before this many changes by other processes were seen: re-read on its next request. */
  epoch: number;
  targets: Map<string, Target>;
  /** In the site cache; false once dropped from it (or never stored: over its budget). */
  kept: boolean;
  /**
   * The slabs its targets' header blocks are packed in (`SiteCache.pack`), counted in the site's
   * weight: its targets go all at once (the site dropped, or the cap of resolved URLs), and their
   * slabs with them, so no slab outlives what the budget counts.
   */
  blocks: BlockSlabs;
  /** The live revision's compiled rules, read once with the record; undefined for most sites. */
  rules?: SiteRules;
  /** Rules of revisions seen through preview addresses lately, kept so their index is built once. */
  previewRules?: Map<string, SiteRules | undefined>;
}

export interface SiteRules {
  redirects?: CompiledRedirects;
  headers?: CompiledHeaders;
}

export interface SiteCache {
  /** The site asked for by name (a former name finds the renamed site), or undefined. */
  lookup(name: string): CachedSite | undefined;
  /**
   * Where `url` (with `query`, which only rules with query conditions read, and `host`, the
   * request's in lower case without a port, which only rules that name one read) leads in the
   * site's revision `revision` (the live one, or a preview's).
   */
  target(cached: CachedSite, revision: string, url: string, query: string, host?: string): Target;
  /**
   * A header block of one of the site's targets (headers.ts `packedAfterFirst`), packed in the
   * site's own slabs; a slab it starts counts against the budget with the site, whole, until the
   * site's targets go.
   */
  pack(cached: CachedSite, list: HeaderList): Buffer;
  readonly size: number;
  readonly weight: number;
  /** Lookups answered from the cache or not, for site records and for resolved URLs, since the start. */
  readonly counts: SiteCacheCounts;
}

export interface SiteCacheCounts {
  siteHits: number;
  siteMisses: number;
  pathHits: number;
  pathMisses: number;
}

// Writes made through any thread of this process invalidate cached site records at once (store
// change feed). Writes by other processes (admin CLI) move their mark in the store, checked this
// often; then every cached record is re-read on its next request. Re-reading each record on a
// timer instead cost a 10,000-site rotation 30% of its throughput.
const ELSEWHERE_CHECK_MS = 1000;
// Ticks once per ELSEWHERE_CHECK_MS for every site cache of this thread, so a lookup compares two
// numbers instead of reading the clock (a native call per request, 2–3 % of a 2 KB page's CPU).
// Unreferenced: it keeps no thread alive.
let ticks = 0;
let ticker: ReturnType<typeof setInterval> | undefined;
function startTicker(): void {
  ticker ??= setInterval(() => ticks++, ELSEWHERE_CHECK_MS);
  ticker.unref();
}
const MAX_TARGETS_PER_SITE = 10_000;
// Estimated memory of a cached site record (with its Map) and of one resolved URL (Target,
// FileEntry, prepared header buffers) besides the URL itself, from bench:scale: about 2 KB of live
// heap per cached site, and 2.3 KB per cached 1,000-character path.
const SITE_WEIGHT = 2048;
const TARGET_WEIGHT = 1280;

/** A target with every field present, so that all targets share one shape (the hot path reads them). */
function targetOf(fields: Pick<Target, 'status' | 'html' | 'cacheControl'> & Partial<Pick<Target, 'entry' | 'redirect' | 'site' | 'error'>>): Target {
  const entry = fields.entry;
  const unrecorded = entry !== undefined && entry.encodings === undefined && wantsVariants(entry.type, entry.size) && entry.size <= VARIANT_ON_DEMAND_MAX_BYTES;
  const encodings = unrecorded ? MADE_ON_DEMAND : entry?.encodings ? ENCODINGS.filter((e) => entry.encodings![e] !== undefined) : NO_ENCODINGS;
  // What a request reads of its target first, its identity `Ready` fields among them (the fields'
  // order is the object's layout: fewer of the CPU's cache lines per request across many pages).
  return {
    error: fields.error,
    entry: fields.entry,
    html: fields.html,
    status: fields.status,
    varies: encodings.length > 0,
    identity: undefined,
    held: undefined,
    used: false,
    size: 0,
    full: NO_BLOCK,
    encodings,
    unrecorded,
    br: undefined,
    gzip: undefined,
    redirect: fields.redirect,
    site: fields.site,
    cacheControl: fields.cacheControl,
    keepsBodies: false,
    notModified: NO_BLOCK,
    etag: '',
    heldFrom: undefined,
  };
}
const NO_ENCODINGS: readonly Encoding[] = Object.freeze([]);
// A target's header blocks until its identity answer is prepared (never sent: `identity` is unset).
const NO_BLOCK = Buffer.alloc(0);
// gzip alone: the faster to make (brotli at its fast quality takes about twice as long), and every browser takes it.
const MADE_ON_DEMAND: readonly Encoding[] = Object.freeze(['gzip']);

/** What the site cache tells the body cache (bodies.ts). */
export interface SiteBodies {
  /** Runs for every cached site dropped because it changed (its bodies go with it). */
  forget(cached: CachedSite): void;
  /** Runs for every target the cache drops, for whatever reason: its `Ready`s hold no bytes after. */
  release(target: Target): void;
}

export function createSiteCache(store: SiteReader, config: ServeConfig, bodies: SiteBodies): SiteCache {
  const release = (targets: Map<string, Target>): void => {
    for (const target of targets.values()) if (target.keepsBodies) bodies.release(target);
  };
  // Within a byte budget: without one, random paths across many sites would each hold memory
  // until restart. A site that leaves it (evicted, deleted, replaced) takes its targets' hold on
  // bodies along, so that no body outlives the body cache's budget through a forgotten target.
  const sites = createLruCache<CachedSite>(config.siteCacheBytes, (cached) => {
    cached.kept = false;
    release(cached.targets);
  });

  const forgetSite = (cached: CachedSite): void => {
    if (sites.get(cached.key) === cached) sites.delete(cached.key);
    bodies.forget(cached);
  };

  // Resolved URLs and their header slabs count against the site cache's budget with their site.
  const charge = (cached: CachedSite, bytes: number): void => {
    if (cached.kept) sites.adjust(cached.key, bytes);
  };

  store.onSiteChanged(({ siteId, name }) => {
    const named = sites.get(name);
    if (named !== undefined) forgetSite(named);
    // Former names of a renamed site are cached under their own key.
    for (const cached of sites.values()) if (cached.site.id === siteId) forgetSite(cached);
  });

  const counts: SiteCacheCounts = { siteHits: 0, siteMisses: 0, pathHits: 0, pathMisses: 0 };
  let epoch = 0;
  let elsewhere = store.siteChangesElsewhere();
  startTicker();
  let checkedAtTick = ticks;

  const methods: Omit<SiteCache, 'size' | 'weight'> = {
    lookup(name) {
      if (ticks !== checkedAtTick) {
        checkedAtTick = ticks;
        const marks = store.siteChangesElsewhere();
        if (marks !== elsewhere) {
          elsewhere = marks;
          epoch++;
        }
      }
      let cached = sites.get(name);
      if (cached !== undefined && cached.epoch === epoch) {
        counts.siteHits++;
        return cached;
      }
      counts.siteMisses++;
      const site = store.getSite(name);
      // The name asked for is the host router's own string, the same each request: held here too,
      // the site server's check that the site was not renamed compares two references, not text.
      if (site?.name === name) site.name = name;
      if (site === undefined) {
        if (cached !== undefined) forgetSite(cached);
        return undefined;
      }
      // Targets depend on the live revision only; badge choice is made per request from the plan.
      if (cached !== undefined && cached.site.liveRevision === site.liveRevision) {
        cached.site = site;
        cached.epoch = epoch;
        return cached;
      }
      // A live revision changed by another process (admin CLI) is noticed here, not by the feed.
      if (cached !== undefined) forgetSite(cached);
      cached = { key: name, site, epoch, targets: new Map(), kept: false, blocks: newBlockSlabs(), ...rulesOf(store, site.liveRevision) };
      cached.kept = sites.set(name, cached, SITE_WEIGHT + name.length);
      return cached;
    },

    target(cached, revision, url, query, host) {
      const live = revision === cached.site.liveRevision;
      // A preview follows its own revision's rules (an LMDB point read: previews are rare).
      const rules = live ? cached.rules : previewRulesOf(store, cached, revision);
      // Only rules with query conditions make the answer depend on the query.
      const path = rules?.redirects?.usesQuery === true && query !== '' ? `${url}?${query}` : url;
      // Only rules that name a host make it depend on the host (a site may have several).
      const byHost = rules?.redirects?.usesHost === true || rules?.headers?.usesHost === true ? host : undefined;
      // A preview's targets sit beside the live ones, under a key no URL has (URLs start with `/`),
      // and so do those of a host (host names have no `|`).
      const key = byHost === undefined && live ? path : `${byHost === undefined ? '' : `${byHost}|`}${live ? path : `${revision} ${path}`}`;
      const known = cached.targets.get(key);
      if (known !== undefined) {
        counts.pathHits++;
        return known;
      }
      counts.pathMisses++;
      const normalized = normalizeRequestPath(url, config.maxUrlBytes);
      let target: Target;
      if (!normalized.ok) {
        target = targetOf({ status: 404, error: normalized.status, html: false, cacheControl: '' });
      } else {
        const has = (path: string): boolean => store.getFile(revision, path) !== undefined;
        const resolution = resolveSitePath(normalized.path, normalized.trailingSlash, has, rules?.redirects, () => new URLSearchParams(query), byHost);
        const site = rules?.headers ? headersFor(rules.headers, normalized.path === '' ? [] : normalized.path.split('/'), byHost) : undefined;
        if (resolution.kind === 'folder' || resolution.kind === 'redirect') {
          const ownQuery = resolution.kind === 'redirect' && resolution.ownQuery;
          target = targetOf({ status: 404, redirect: { status: resolution.status, location: resolution.location, ownQuery }, html: false, cacheControl: '' });
        } else {
          // Point reads are cached by LMDB; the entry of the path resolved to is read once more here.
          const entry = resolution.kind === 'missing' || resolution.kind === 'gone' ? undefined : store.getFile(revision, resolution.path);
          target = targetOf({
            status: resolution.status,
            entry,
            site,
            html: entry !== undefined && isHtmlType(entry.type),
            cacheControl: entry ? cacheControlFor(entry.type) : '',
          });
        }
      }
      if (cached.targets.size >= MAX_TARGETS_PER_SITE) {
        let freed = 0;
        for (const key of cached.targets.keys()) freed += TARGET_WEIGHT + key.length;
        release(cached.targets);
        cached.targets.clear();
        // Their header blocks go with them, and the slabs that held them: new ones for the next.
        freed += cached.blocks.bytes;
        cached.blocks = newBlockSlabs();
        charge(cached, -freed);
      }
      target.keepsBodies = cached.kept;
      cached.targets.set(key, target);
      charge(cached, TARGET_WEIGHT + key.length);
      return target;
    },

    pack(cached, list) {
      const blocks = cached.blocks;
      const before = blocks.bytes;
      const block = packedAfterFirst(list, blocks);
      if (blocks.bytes !== before) charge(cached, blocks.bytes - before);
      return block;
    },

    counts,
  };
  // Not `get size()` in the literal: that would make the cache a slow object (fast-object.ts).
  return withGetters(methods, { size: () => sites.size, weight: () => sites.weight });
}

const PREVIEW_RULES_KEPT = 8;

/** A preview revision's rules, kept with the site so the rules' index is built once, not per URL. */
function previewRulesOf(store: SiteReader, cached: CachedSite, revision: string): SiteRules | undefined {
  const kept = (cached.previewRules ??= new Map());
  if (kept.has(revision)) return kept.get(revision);
  if (kept.size >= PREVIEW_RULES_KEPT) kept.delete(kept.keys().next().value!);
  const rules = rulesOf(store, revision).rules;
  kept.set(revision, rules);
  return rules;
}

/** A revision's compiled rules, if it has any (one LMDB read per live revision and thread). */
function rulesOf(store: SiteReader, revision: string | undefined): { rules?: SiteRules } {
  const extras = revision === undefined ? undefined : store.getRevisionExtras(revision);
  if (extras === undefined || (extras.redirects === undefined && extras.headers === undefined)) return {};
  return { rules: { ...(extras.redirects ? { redirects: extras.redirects } : {}), ...(extras.headers ? { headers: servableHeaders(extras.headers) } : {}) } };
}
