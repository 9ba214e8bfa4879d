import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { ServeConfig } from '../config.js';
import { isHtmlType, isCompressibleType } from '../content-types.js';
import { sendResponse, statusLine, streamFile, type Headers } from '../http.js';
import type { Logger } from '../log.js';
import type { Encoding, FileEntry, SiteRecord, Store } from '../store/index.js';
import type { HttpRequest, HttpResponse } from '../uws.js';
import { injectBadge } from './badge.js';
import { cacheControlFor, matchesIfNoneMatch, parseRange, pickEncoding } from './http-rules.js';
import { createLruCache } from './lru-cache.js';
import { statusPage } from './pages.js';
import { normalizeRequestPath } from './request-path.js';
import { resolveSitePath } from './resolve.js';

export interface SiteServerOptions {
  store: Store;
  config: ServeConfig;
  /** Public address of a site, for redirects after a rename. */
  siteUrl: (name: string) => string;
  log: Logger;
  now?: () => number;
}

export interface SiteServer {
  /** Answers one request for the site `siteName` (already taken from the Host header). */
  handle(res: HttpResponse, req: HttpRequest, siteName: string): void;
}

/** Where a request URL of one revision leads; revisions are immutable, so this never goes stale. */
interface Target {
  status: 200 | 404;
  entry?: FileEntry;
  error?: 400 | 414;
}

/** A body held in memory with its ETag: a cached blob, or a badged page and its compressed forms. */
interface Body {
  bytes: Buffer;
  etag: string;
}

/** What one response carries: in-memory bytes, or a blob file streamed from disk. */
interface Representation {
  body?: Body;
  etag: string;
  encoding?: Encoding;
  /** The entry exists in more than one encoding, so caches must key on Accept-Encoding. */
  varies: boolean;
  size: number;
  rangeable: boolean;
}

interface BadgedPage {
  identity: Body;
  br?: Body;
  gzip?: Body;
}

const SECURITY_HEADERS: Headers = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
};
const ALLOW = 'GET, HEAD';
const MAX_CACHED_TARGETS = 200_000;
const ENCODINGS: readonly Encoding[] = ['br', 'gzip'];
// Badged pages are compressed on first use; past this size the page is served uncompressed
// rather than holding a serving thread in a long synchronous compression.
const MAX_BADGE_COMPRESS_BYTES = 2 * 1024 * 1024;

export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { store, config, log } = options;
  const now = options.now ?? Date.now;
  const targets = createLruCache<Target>(MAX_CACHED_TARGETS);
  const bodies = createLruCache<Body | BadgedPage>(config.cacheBytes);

  const readBlob = (entry: FileEntry, encoding: Encoding | undefined): Body => {
    const key = encoding ? `${entry.sha256}.${encoding}` : entry.sha256;
    let body = bodies.get(key) as Body | undefined;
    if (body === undefined) {
      const bytes = store.blobs.readSync(entry.sha256, encoding);
      body = { bytes, etag: encoding ? `"${entry.sha256}-${encoding}"` : `"${entry.sha256}"` };
      bodies.set(key, body, bytes.byteLength);
    }
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

  const resolveTarget = (revision: string, url: string): Target => {
    const key = `${revision}\u0000${url}`;
    let target = targets.get(key);
    if (target !== undefined) return target;
    const normalized = normalizeRequestPath(url, config.maxUrlBytes);
    if (!normalized.ok) {
      target = { status: 404, error: normalized.status };
    } else {
      const found = new Map<string, FileEntry>();
      const resolution = resolveSitePath(normalized.path, normalized.trailingSlash, (path) => {
        const entry = store.getFile(revision, path);
        if (entry) found.set(path, entry);
        return entry !== undefined;
      });
      target =
        resolution.kind === 'missing'
          ? { status: 404 }
          : { status: resolution.status, entry: found.get(resolution.path) ?? store.getFile(revision, resolution.path) };
    }
    targets.set(key, target, 1);
    return target;
  };

  const sendPage = (res: HttpResponse, status: number, head: boolean, extra: Headers = {}, siteName?: string): void => {
    const body = statusPage(status as Parameters<typeof statusPage>[0], siteName === undefined ? undefined : { siteName });
    const headers: Headers = {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': status === 404 ? 'public, max-age=60' : 'no-store',
      ...SECURITY_HEADERS,
      ...extra,
    };
    sendResponse(res, status, headers, body, head);
  };

  /** Picks the bytes to send for an entry: badged or not, which encoding, in memory or on disk. */
  const represent = (req: HttpRequest, site: SiteRecord, entry: FileEntry, rangeRequested: boolean): Representation => {
    const acceptEncoding = req.getHeader('accept-encoding');
    if (isHtmlType(entry.type) && (site.plan === 'anonymous' || site.plan === 'free')) {
      const page = badgedPage(entry, site);
      const available = ENCODINGS.filter((e) => page[e] !== undefined);
      const encoding = available.length > 0 ? pickEncoding(acceptEncoding, available) : undefined;
      const body = encoding ? page[encoding]! : page.identity;
      return { body, etag: body.etag, encoding, varies: available.length > 0, size: body.bytes.byteLength, rangeable: false };
    }
    const available = entry.encodings ? ENCODINGS.filter((e) => entry.encodings![e] !== undefined) : [];
    // A byte range always addresses the identity bytes.
    const encoding = available.length > 0 && !rangeRequested ? pickEncoding(acceptEncoding, available) : undefined;
    const size = encoding ? entry.encodings![encoding]! : entry.size;
    const body = size <= config.streamThresholdBytes ? readBlob(entry, encoding) : undefined;
    const etag = body ? body.etag : encoding ? `"${entry.sha256}-${encoding}"` : `"${entry.sha256}"`;
    return { body, etag, encoding, varies: available.length > 0, size, rangeable: !isHtmlType(entry.type) };
  };

  const sendEntry = (res: HttpResponse, req: HttpRequest, site: SiteRecord, entry: FileEntry, status: 200 | 404, head: boolean): void => {
    const rangeHeader = status === 200 ? req.getHeader('range') : '';
    const rep = represent(req, site, entry, rangeHeader !== '');
    const headers: Headers = {
      'Content-Type': entry.type,
      'Cache-Control': cacheControlFor(entry.type),
      ...SECURITY_HEADERS,
    };
    if (rep.varies) headers.Vary = 'Accept-Encoding';
    if (status === 200) {
      headers.ETag = rep.etag;
      if (rep.rangeable) headers['Accept-Ranges'] = 'bytes';
      const ifNoneMatch = req.getHeader('if-none-match');
      if (ifNoneMatch !== '' && matchesIfNoneMatch(ifNoneMatch, rep.etag)) {
        delete headers['Content-Type'];
        delete headers['Accept-Ranges'];
        return sendResponse(res, 304, headers, '', true);
      }
    }
    if (rep.encoding) headers['Content-Encoding'] = rep.encoding;

    let start = 0;
    let end = rep.size - 1;
    let code: number = status;
    if (rep.rangeable && rangeHeader !== '') {
      const range = parseRange(rangeHeader, rep.size);
      if (range === 'unsatisfiable') {
        return sendResponse(res, 416, { 'Content-Range': `bytes */${rep.size}`, ...SECURITY_HEADERS }, '', head);
      }
      if (range) {
        start = range.start;
        end = range.end;
        code = 206;
        headers['Content-Range'] = `bytes ${start}-${end}/${rep.size}`;
      }
    }

    if (rep.body) {
      const whole = start === 0 && end === rep.size - 1;
      return sendResponse(res, code, headers, whole ? rep.body.bytes : rep.body.bytes.subarray(start, end + 1), head);
    }
    if (head) return sendResponse(res, code, headers, '', true, end - start + 1);
    streamFile(res, { path: store.blobs.pathOf(entry.sha256, rep.encoding), start, end, status: code, headers, log });
  };

  const handle = (res: HttpResponse, req: HttpRequest, siteName: string): void => {
    const method = req.getMethod();
    const head = method === 'head';
    try {
      if (method !== 'get' && !head) return sendPage(res, 405, false, { Allow: ALLOW });

      const site = store.getSite(siteName);
      if (site === undefined) return sendPage(res, 404, head);
      const url = req.getUrl();
      if (site.name !== siteName) {
        const query = req.getQuery();
        const location = `${options.siteUrl(site.name)}${url}${query ? `?${query}` : ''}`;
        return sendPage(res, 301, head, { Location: location, 'Cache-Control': 'public, max-age=300' });
      }
      if (site.state === 'deleted' || (site.expiresAt !== undefined && !site.claimed && site.expiresAt <= now())) {
        return sendPage(res, 410, head, {}, siteName);
      }
      if (site.state === 'taken_down') return sendPage(res, 451, head, {}, siteName);
      if (site.liveRevision === undefined) return sendPage(res, 404, head, {}, siteName);

      const target = resolveTarget(site.liveRevision, url);
      if (target.error) return sendPage(res, target.error, head);
      if (target.entry === undefined) return sendPage(res, 404, head, {}, siteName);

      sendEntry(res, req, site, target.entry, target.status, head);
    } catch (err) {
      log.error({ err, site: siteName }, 'serve.failed');
      sendPage(res, 500, head);
    }
  };

  return { handle };
}
