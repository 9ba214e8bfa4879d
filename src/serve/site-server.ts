import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { ServeConfig } from '../config.js';
import { hasBadge, isCompressibleType, isExpired, isHtmlType } from '../rules/index.js';
import { endFromMemory, type Headers, type HttpRequest, type HttpResponse, statusLine, streamFile, writeResponse } from '../http/index.js';
import type { Logger } from '../log.js';
import type { Encoding, FileEntry, SiteRecord, Store } from '../store/index.js';
import { injectBadge } from './badge.js';
import { cacheControlFor, matchesIfNoneMatch, parseRange, pickEncoding } from './http-rules.js';
import { createLruCache, type LruEntry } from './lru-cache.js';
import { statusPage, type StatusPageCode } from './pages.js';
import { normalizeRequestPath } from './request-path.js';
import { resolveSitePath } from './resolve.js';

export interface SiteServerOptions {
  store: Store;
  config: ServeConfig;
  /** Public address of a site, for redirects after a rename. */
  siteUrl: (name: string) => string;
  log: Logger;
  /** Wall clock for expiry decisions; injectable for tests. */
  now?: () => number;
}

export interface SiteServer {
  /** Answers one request for the site `siteName` (already taken from the Host header). */
  handle(res: HttpResponse, req: HttpRequest, siteName: string): void;
  /** What this thread's caches hold, against their budgets. */
  cacheStats(): SiteCacheStats;
}

export interface SiteCacheStats {
  bodyBytes: number;
  sites: number;
  /** Estimated bytes of cached site records and resolved URLs. */
  siteBytes: number;
}

/**
 * Where one URL of one revision leads, with what the response needs precomputed. Revisions are
 * immutable, so a target never goes stale while its revision is live.
 */
interface Target {
  status: 200 | 404;
  entry?: FileEntry;
  /** Set when the URL itself is bad (400) or too long (414). */
  error?: 400 | 414;
  html: boolean;
  cacheControl: string;
  encodings: readonly Encoding[];
  /** Header lists for in-memory bodies, built on first use: [identity, br, gzip]. */
  prepared: (PreparedHeaders | undefined)[];
  /** The body cache's entries for the same three, kept to skip a lookup per request. */
  held: (LruEntry<Body | BadgedPage> | undefined)[];
}

/**
 * Every header of one representation, as the bytes uWS would write for them. It goes out as the
 * value of a single `writeHeader` call ("Content-Type: <type>\r\nCache-Control: …"): one native
 * call with no string conversion instead of one per header, which is measurable on this path.
 * Only our own constants go in (allowlisted type, hash ETag), never request data.
 */
interface PreparedHeaders {
  /** For 200/404 with a body: everything after "Content-Type: ". */
  full: Buffer;
  /** For 304: everything after "ETag: ". */
  notModified: Buffer;
  etag: string;
}

/** A site record as this thread last read it, with the targets of its live revision. */
interface CachedSite {
  /** Key in the site cache (the name it was asked for). */
  key: string;
  site: SiteRecord;
  /** Read before this many changes by other processes were seen: re-read on its next request. */
  epoch: number;
  targets: Map<string, Target>;
}

/** A body held in memory with its ETag: a cached blob, or a badged page and its compressed forms. */
interface Body {
  bytes: Buffer;
  etag: string;
}

interface BadgedPage {
  identity: Body;
  br?: Body;
  gzip?: Body;
}

const ENCODINGS: readonly Encoding[] = ['br', 'gzip'];
// Writes made through any thread of this process invalidate cached site records at once (store
// change feed). Writes by other processes (admin CLI) move their mark in the store, checked this
// often; then every cached record is re-read on its next request. Re-reading each record on a
// timer instead cost a 10,000-site rotation 30% of its throughput.
const ELSEWHERE_CHECK_MS = 1000;
const MAX_TARGETS_PER_SITE = 10_000;
// Estimated memory of a cached site record (with its Map) and of one resolved URL (Target,
// FileEntry, prepared header buffers) besides the URL itself, from bench:scale: about 2 KB of live
// heap per cached site, and 2.3 KB per cached 1,000-character path.
const SITE_WEIGHT = 2048;
const TARGET_WEIGHT = 1280;
// Cached bodies up to this size go out with `end` (uWS may copy what the socket does not take at
// once, a small cost); larger ones are sent from the cached buffer with backpressure instead.
const END_COPY_MAX_BYTES = 64 * 1024;
// Badged pages are compressed on first use; past this size the page is served uncompressed
// rather than holding a serving thread in a long synchronous compression.
const MAX_BADGE_COMPRESS_BYTES = 2 * 1024 * 1024;

function prepareHeaders(entry: FileEntry, target: Target, encoding: Encoding | undefined): PreparedHeaders {
  const ok = target.status === 200;
  const etag = encoding ? `"${entry.sha256}-${encoding}"` : `"${entry.sha256}"`;
  const common = [
    ['Cache-Control', target.cacheControl],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'strict-origin-when-cross-origin'],
  ];
  if (target.encodings.length > 0) common.push(['Vary', 'Accept-Encoding']);
  const full = [...common];
  if (ok) full.push(['ETag', etag]);
  if (ok && !target.html) full.push(['Accept-Ranges', 'bytes']);
  if (encoding) full.push(['Content-Encoding', encoding]);
  const join = (first: string, rest: string[][]): Buffer =>
    Buffer.from([first, ...rest.map(([name, value]) => `${name}: ${value}`)].join('\r\n'), 'latin1');
  return { full: join(entry.type, full), notModified: join(etag, common), etag };
}

export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { store, config, log } = options;
  const now = options.now ?? Date.now;
  // Site records and resolved URLs within their budget: without one, random paths across many
  // sites would each hold memory until restart.
  const sites = createLruCache<CachedSite>(config.siteCacheBytes);
  const bodies = createLruCache<Body | BadgedPage>(config.cacheBytes);
  const encodingChoices = new Map<string, Encoding | undefined>();

  // Bodies of a revision that is no longer live would otherwise sit in the cache until the byte
  // budget pushes them out, so a site deployed to all day fills every thread's budget with
  // superseded pages. Content another site shares is just read again on its next request.
  const forgetBodies = (cached: CachedSite): void => {
    for (const target of cached.targets.values()) {
      const sha256 = target.entry?.sha256;
      if (sha256 === undefined) continue;
      bodies.delete(sha256);
      for (const encoding of ENCODINGS) bodies.delete(`${sha256}.${encoding}`);
      bodies.delete(`badge:${sha256}:${cached.site.name}`);
    }
  };

  const forgetSite = (cached: CachedSite): void => {
    if (sites.get(cached.key) === cached) sites.delete(cached.key);
    forgetBodies(cached);
  };

  // Resolved URLs count against the site cache's budget with their site.
  const charge = (cached: CachedSite, bytes: number): void => sites.adjust(cached.key, bytes);

  store.onSiteChanged(({ siteId, name }) => {
    const named = sites.get(name);
    if (named !== undefined) forgetSite(named);
    // Former names of a renamed site are cached under their own key.
    for (const cached of sites.values()) if (cached.site.id === siteId) forgetSite(cached);
  });

  let epoch = 0;
  let elsewhere = store.siteChangesElsewhere();
  let elsewhereCheckedAt = performance.now();

  const lookupSite = (name: string): CachedSite | undefined => {
    const checkedAt = performance.now();
    if (checkedAt - elsewhereCheckedAt >= ELSEWHERE_CHECK_MS) {
      elsewhereCheckedAt = checkedAt;
      const marks = store.siteChangesElsewhere();
      if (marks !== elsewhere) {
        elsewhere = marks;
        epoch++;
      }
    }
    let cached = sites.get(name);
    if (cached !== undefined && cached.epoch === epoch) return cached;
    const site = store.getSite(name);
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
    cached = { key: name, site, epoch, targets: new Map() };
    sites.set(name, cached, SITE_WEIGHT + name.length);
    return cached;
  };

  const resolveTarget = (cached: CachedSite, revision: string, url: string): Target => {
    const normalized = normalizeRequestPath(url, config.maxUrlBytes);
    let target: Target;
    if (!normalized.ok) {
      target = { status: 404, error: normalized.status, html: false, cacheControl: '', encodings: [], prepared: [], held: [] };
    } else {
      let last: FileEntry | undefined;
      const resolution = resolveSitePath(normalized.path, normalized.trailingSlash, (path) => {
        last = store.getFile(revision, path);
        return last !== undefined;
      });
      // `has` is probed last for the path it resolves to, so `last` is that file's entry.
      const entry = resolution.kind === 'missing' ? undefined : (last ?? store.getFile(revision, resolution.path));
      target = {
        status: resolution.status,
        entry,
        html: entry !== undefined && isHtmlType(entry.type),
        cacheControl: entry ? cacheControlFor(entry.type) : '',
        encodings: entry?.encodings ? ENCODINGS.filter((e) => entry.encodings![e] !== undefined) : [],
        prepared: [],
        held: [],
      };
    }
    if (cached.targets.size >= MAX_TARGETS_PER_SITE) {
      let freed = 0;
      for (const key of cached.targets.keys()) freed += TARGET_WEIGHT + key.length;
      cached.targets.clear();
      charge(cached, -freed);
    }
    cached.targets.set(url, target);
    charge(cached, TARGET_WEIGHT + url.length);
    return target;
  };

  // Browsers send a handful of distinct Accept-Encoding values; parse each once.
  const chooseEncoding = (acceptEncoding: string, available: readonly Encoding[]): Encoding | undefined => {
    const key = available.length === 2 ? acceptEncoding : `${available[0]}|${acceptEncoding}`;
    if (encodingChoices.has(key)) return encodingChoices.get(key);
    const choice = pickEncoding(acceptEncoding, available);
    if (encodingChoices.size >= 1000) encodingChoices.clear();
    encodingChoices.set(key, choice);
    return choice;
  };

  const bodyKey = (entry: FileEntry, encoding: Encoding | undefined): string =>
    encoding ? `${entry.sha256}.${encoding}` : entry.sha256;

  const readBlob = (entry: FileEntry, encoding: Encoding | undefined): Body => {
    const key = bodyKey(entry, encoding);
    let body = bodies.get(key) as Body | undefined;
    if (body === undefined) {
      const bytes = store.blobs.readSync(entry.sha256, encoding);
      body = { bytes, etag: encoding ? `"${entry.sha256}-${encoding}"` : `"${entry.sha256}"` };
      bodies.set(key, body, bytes.byteLength);
    }
    return body;
  };

  /** `readBlob` for one of a target's representations, through the cache entry the target keeps. */
  const readHeldBlob = (target: Target, slot: number, encoding: Encoding | undefined): Body => {
    const held = target.held[slot];
    const kept = held === undefined ? undefined : (bodies.use(held) as Body | undefined);
    if (kept !== undefined) return kept;
    const body = readBlob(target.entry!, encoding);
    target.held[slot] = bodies.entry(bodyKey(target.entry!, encoding));
    return body;
  };

  const badgedPage = (entry: FileEntry, site: SiteRecord): BadgedPage => {
    const key = `badge:${entry.sha256}:${site.name}`;
    let page = bodies.get(key) as BadgedPage | undefined;
    if (page === undefined) {
      const source = store.blobs.readSync(entry.sha256);
      const bytes = injectBadge(source, { siteName: site.name, reportUrl: `${config.appUrl}/report/${site.name}` });
      const hash = createHash('sha256').update(bytes).digest('hex');
      page = { identity: { bytes, etag: `"${hash}"` } };
      if (isCompressibleType(entry.type) && bytes.byteLength >= 256 && bytes.byteLength <= MAX_BADGE_COMPRESS_BYTES) {
        const br = brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 6, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } });
        const gz = gzipSync(bytes, { level: 6 });
        if (br.byteLength < bytes.byteLength) page.br = { bytes: br, etag: `"${hash}-br"` };
        if (gz.byteLength < bytes.byteLength) page.gzip = { bytes: gz, etag: `"${hash}-gzip"` };
      }
      const weight = bytes.byteLength + (page.br?.bytes.byteLength ?? 0) + (page.gzip?.bytes.byteLength ?? 0);
      bodies.set(key, page, weight);
    }
    return page;
  };

  const sendPage = (res: HttpResponse, status: StatusPageCode | 301, head: boolean, extra: Headers = {}, siteName?: string): void => {
    const body = status === 301 ? '' : statusPage(status, siteName === undefined ? undefined : { siteName });
    const headers: Headers = {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': status === 404 ? 'public, max-age=60' : 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'strict-origin-when-cross-origin',
      ...extra,
    };
    writeResponse(res, status, headers, body, { head });
  };

  /**
   * The hot path: a whole, unbadged body from memory. Everything but the body is precomputed
   * per target, so a request costs a few header lookups and no allocation of its own. Returns
   * false when the request needs the general path (ranges, large files).
   */
  const sendPrepared = (res: HttpResponse, req: HttpRequest, target: Target): boolean => {
    const entry = target.entry!;
    const ok = target.status === 200;
    if (ok && !target.html && req.getHeader('range') !== '') return false;
    let encoding: Encoding | undefined;
    if (target.encodings.length > 0) {
      const acceptEncoding = req.getHeader('accept-encoding');
      if (acceptEncoding !== '') encoding = chooseEncoding(acceptEncoding, target.encodings);
    }
    const size = encoding ? entry.encodings![encoding]! : entry.size;
    if (size > config.streamThresholdBytes) return false;

    const slot = encoding === undefined ? 0 : encoding === 'br' ? 1 : 2;
    let prepared = target.prepared[slot];
    if (prepared === undefined) {
      prepared = prepareHeaders(entry, target, encoding);
      target.prepared[slot] = prepared;
    }

    if (ok) {
      const ifNoneMatch = req.getHeader('if-none-match');
      if (ifNoneMatch !== '' && (ifNoneMatch === prepared.etag || matchesIfNoneMatch(ifNoneMatch, prepared.etag))) {
        res.writeStatus('304 Not Modified');
        res.writeHeader('ETag', prepared.notModified);
        res.endWithoutBody();
        return true;
      }
    } else {
      res.writeStatus('404 Not Found');
    }
    const body = readHeldBlob(target, slot, encoding);
    res.writeHeader('Content-Type', prepared.full);
    if (size <= END_COPY_MAX_BYTES) res.end(body.bytes);
    else endFromMemory(res, body.bytes);
    return true;
  };

  /** Sends a file of the live revision. Synchronous unless the body streams from disk. */
  const sendTarget = (res: HttpResponse, req: HttpRequest, site: SiteRecord, target: Target, head: boolean): void => {
    const entry = target.entry!;
    const ok = target.status === 200;

    if (!head && !(target.html && hasBadge(site.plan)) && sendPrepared(res, req, target)) return;

    // Pick the representation: badged page, precompressed variant or identity bytes.
    let body: Body | undefined;
    let encoding: Encoding | undefined;
    let size: number;
    let varies: boolean;
    let rangeHeader = '';
    if (target.html && hasBadge(site.plan)) {
      const page = badgedPage(entry, site);
      varies = page.br !== undefined || page.gzip !== undefined;
      if (varies) {
        const acceptEncoding = req.getHeader('accept-encoding');
        encoding = acceptEncoding === '' ? undefined : chooseEncoding(acceptEncoding, ENCODINGS.filter((e) => page[e] !== undefined));
      }
      body = encoding ? page[encoding]! : page.identity;
      size = body.bytes.byteLength;
    } else {
      if (ok && !target.html) rangeHeader = req.getHeader('range');
      varies = target.encodings.length > 0;
      // A byte range always addresses the identity bytes.
      if (varies && rangeHeader === '') {
        const acceptEncoding = req.getHeader('accept-encoding');
        encoding = acceptEncoding === '' ? undefined : chooseEncoding(acceptEncoding, target.encodings);
      }
      size = encoding ? entry.encodings![encoding]! : entry.size;
      if (size <= config.streamThresholdBytes) body = readBlob(entry, encoding);
    }
    const etag = body ? body.etag : encoding ? `"${entry.sha256}-${encoding}"` : `"${entry.sha256}"`;

    if (ok) {
      const ifNoneMatch = req.getHeader('if-none-match');
      if (ifNoneMatch !== '' && matchesIfNoneMatch(ifNoneMatch, etag)) {
        res.writeStatus('304 Not Modified');
        res.writeHeader('ETag', etag);
        res.writeHeader('Cache-Control', target.cacheControl);
        if (varies) res.writeHeader('Vary', 'Accept-Encoding');
        res.writeHeader('X-Content-Type-Options', 'nosniff');
        res.writeHeader('Referrer-Policy', 'strict-origin-when-cross-origin');
        res.endWithoutBody();
        return;
      }
    }

    let start = 0;
    let end = size - 1;
    let status: number = target.status;
    let contentRange: string | undefined;
    if (rangeHeader !== '') {
      const range = parseRange(rangeHeader, size);
      if (range === 'unsatisfiable') {
        return writeResponse(res, 416, {
          'Content-Range': `bytes */${size}`,
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'strict-origin-when-cross-origin',
        }, '', { head });
      }
      if (range) {
        start = range.start;
        end = range.end;
        status = 206;
        contentRange = `bytes ${start}-${end}/${size}`;
      }
    }

    const headers: Headers = {
      'Content-Type': entry.type,
      'Cache-Control': target.cacheControl,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'strict-origin-when-cross-origin',
    };
    if (varies) headers.Vary = 'Accept-Encoding';
    if (ok) headers.ETag = etag;
    if (ok && !target.html) headers['Accept-Ranges'] = 'bytes';
    if (encoding) headers['Content-Encoding'] = encoding;
    if (contentRange) headers['Content-Range'] = contentRange;

    if (body) {
      const whole = start === 0 && end === size - 1;
      const bytes = whole ? body.bytes : body.bytes.subarray(start, end + 1);
      if (head || bytes.byteLength <= END_COPY_MAX_BYTES) return writeResponse(res, status, headers, bytes, { head });
      if (status !== 200) res.writeStatus(statusLine(status));
      for (const name in headers) res.writeHeader(name, headers[name]!);
      return endFromMemory(res, bytes);
    }
    if (head) return writeResponse(res, status, headers, '', { head, headLength: end - start + 1 });
    streamFile(res, { path: store.blobs.pathOf(entry.sha256, encoding), start, end, status, headers, log });
  };

  const handle = (res: HttpResponse, req: HttpRequest, siteName: string): void => {
    const method = req.getMethod();
    const head = method === 'head';
    try {
      if (method !== 'get' && !head) return sendPage(res, 405, false, { Allow: 'GET, HEAD' });

      const cached = lookupSite(siteName);
      if (cached === undefined) return sendPage(res, 404, head);
      const site = cached.site;
      const url = req.getUrl();
      if (site.name !== siteName) {
        const query = req.getQuery();
        const location = `${options.siteUrl(site.name)}${url}${query ? `?${query}` : ''}`;
        return sendPage(res, 301, head, { Location: location, 'Cache-Control': 'public, max-age=300' });
      }
      if (site.state === 'deleted' || isExpired(site, now())) {
        return sendPage(res, 410, head, {}, siteName);
      }
      if (site.state === 'taken_down') return sendPage(res, 451, head, {}, siteName);
      const revision = site.liveRevision;
      if (revision === undefined) return sendPage(res, 404, head, {}, siteName);

      const target = cached.targets.get(url) ?? resolveTarget(cached, revision, url);
      if (target.error !== undefined) return sendPage(res, target.error, head);
      if (target.entry === undefined) return sendPage(res, 404, head, {}, siteName);
      sendTarget(res, req, site, target, head);
    } catch (err) {
      log.error({ err, site: siteName }, 'serve.failed');
      sendPage(res, 500, head);
    }
  };

  return { handle, cacheStats: () => ({ bodyBytes: bodies.weight, sites: sites.size, siteBytes: sites.weight }) };
}

