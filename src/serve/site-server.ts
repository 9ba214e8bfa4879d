import type { BadgedPage } from '../badge/index.js';
import type { ServeConfig } from '../config.js';
import { isBucketUnavailable } from '../errors.js';
import {
  copyServedRequest,
  createEncodingChooser,
  endFromMemory,
  HEADER_NAMES,
  isAborted,
  ifRangeHolds,
  matchesIfNoneMatch,
  parseRange,
  markFinished,
  statusLine,
  streamFile,
  PLAIN_ENDS,
  remoteAddressText,
  trackAbort,
  writeResponse,
  type Headers,
  type HttpRequest,
  type HttpResponse,
  type ResponseEnds,
  type ServedRequest,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { ACCESS_PATHS, ENCODINGS, hasBadge, isExpired, previewLabel, withRequestQuery, type Encoding, type SiteHeaders } from '../rules/index.js';
import { packedRangeOf, type FileEntry, type SiteRecord } from '../store/index.js';
import { accessOfHost, type AccessGate } from './access.js';
import { ANSWER_HEADERS } from './answer-headers.js';
import type { DomainServing } from './domain-route.js';
import { BlobNotLocal, createBodyCache, VariantPending, type BadgedPageBuilder } from './bodies.js';
import {
  blobEtag,
  fileHeaders,
  joinAfterFirst,
  notModifiedHeaders,
  pageHeaders,
  PROTECTED_CACHE_CONTROL,
  protectedHeaders,
  SECURITY_HEADERS,
  type FileAnswer,
  type HeaderList,
} from './headers.js';
import { statusPage, type StatusPageCode } from './pages.js';
import { previewRevision, type PreviewReader } from './preview-revision.js';
import { createSiteCache, type CachedSite, type Ready, type SiteCacheCounts, type SiteReader, type Target } from './site-cache.js';
import type { VisitCounter } from './visits.js';

export interface SiteServerOptions {
  store: SiteReader & PreviewReader;
  config: ServeConfig;
  /** Public address of a site, for redirects after a rename. */
  siteUrl: (name: string) => string;
  log: Logger;
  /** Wall clock for expiry decisions; injectable for tests. */
  now?: () => number;
  /** Builds large badged pages in a worker thread (the ingest pool's badge lane). */
  buildBadgedPage?: BadgedPageBuilder;
  /** Lets visitors into protected sites; without it they are all refused. */
  gate?: AccessGate;
  /** Moves a live site's own address to the primary domain its owner chose, if any. */
  domains?: Pick<DomainServing, 'siteRedirect' | 'redirect'>;
  /**
   * How the prepared path ends its answers: through the response meter (http/response-meter.ts),
   * which counts them without its wrappers, or plainly (the default).
   */
  ends?: ResponseEnds;
  /** Counts the live sites' page views, 404s and bytes (analytics); absent: nothing is counted. */
  visits?: VisitCounter;
}

export interface SiteServer {
  /**
   * Answers one request for the site `siteName` (already taken from the Host header), or for its
   * revision number `preview` (`<number>--<name>`); `domain`: the custom domain it came by;
   * `method`: 'get' when uWS's route already says so (saves asking it).
   */
  handle(res: HttpResponse, req: HttpRequest, siteName: string, preview?: number, domain?: string, method?: 'get'): void;
  /** What this thread's caches hold, against their budgets. */
  cacheStats(): SiteCacheStats;
}

export interface SiteCacheStats {
  bodyBytes: number;
  sites: number;
  /** Estimated bytes of cached site records and resolved URLs. */
  siteBytes: number;
  /** Badged pages built by a worker thread so far (pages too large to build while serving). */
  badgedPagesBuiltElsewhere: number;
  /** Compressed variants made from their blob so far, before their deploy's compressor recorded them. */
  variantsMadeOnDemand: number;
  /** Site records and resolved URLs found in the cache, or read from the store, so far. */
  lookups: SiteCacheCounts;
}

/** What the steps read of a request: uWS's own, or a copy of it made before an await. */
type SiteRequest = ServedRequest;

/** The request headers an answer depends on, read before any await. */
interface Asked {
  head: boolean;
  acceptEncoding: string;
  ifNoneMatch: string;
  range: string;
  /** Read only beside a `range`. */
  ifRange: string;
}

/**
 * How an answer differs from a public site's live one: previews are `noindex`; every answer of a
 * protected site gets the privacy headers over the site's own (headers.ts `protectedHeaders`).
 */
interface Privacy {
  noindex: true;
  protected?: true;
}
const PREVIEW_PRIVACY: Privacy = { noindex: true };
const PROTECTED_PRIVACY: Privacy = { noindex: true, protected: true };
const NOINDEX: Headers = { 'X-Robots-Tag': 'noindex' };
// No extra headers: shared, never written to (an empty object per request was garbage on the hot path).
const NO_HEADERS: Headers = Object.freeze({});

/** Seconds a visitor is told to wait when a file must come from a bucket that cannot be reached. */
const BUCKET_RETRY_AFTER_S = '30';
/** Downloads one request may wait for (a second is needed only if the first file went again at once). */
const MAX_FETCHES = 2;

// Cached bodies up to this size go out with `end` (uWS may copy what the socket does not take at
// once, a small cost); larger ones are sent from the cached buffer with backpressure instead.
const END_COPY_MAX_BYTES = 64 * 1024;

/**
 * Published sites (SPEC 4.5), one request in named steps, as GitLab Pages' reader does:
 * site (the record and its state) → target (where the URL leads) → body (bytes in memory, a
 * badged page, or a file to stream) → headers (headers.ts) → send. A whole unbadged body from
 * memory takes the prepared path, which precomputes everything but the body per target.
 */
export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { store, config, log } = options;
  const now = options.now ?? Date.now;
  const ends = options.ends ?? PLAIN_ENDS;
  const bodies = createBodyCache(store, config, options.buildBadgedPage);
  const sites = createSiteCache(store, config, bodies);
  const reportUrl = (siteName: string): string => `${config.appUrl}/report/${siteName}`;
  // Browsers send a handful of distinct Accept-Encoding values; each is negotiated once.
  const chooseEncoding = createEncodingChooser(ENCODINGS);
  const visits = options.visits;
  // Behind a number of trusted proxies, the client is named in X-Forwarded-For whatever the connection's address.
  const forwardedNamesClient = config.access.trustProxy.kind === 'hops';
  // Body bytes and status of the answer just sent from a file (set by sendPrepared and sendBody), for `visits`.
  let sentBytes = 0;
  let sentStatus = 0;

  const answerOf = (target: Target, type: string, varies: boolean, etag: string, encoding: Encoding | undefined, privacy?: Privacy): FileAnswer => {
    const ok = target.status === 200;
    const answer: FileAnswer = {
      type,
      cacheControl: target.cacheControl,
      varies,
      ...(ok ? { etag } : {}),
      ranges: ok && !target.html,
      ...(encoding ? { encoding } : {}),
      ...(target.site ? { site: target.site } : {}),
    };
    if (privacy === undefined) return answer;
    if (!privacy.protected) return { ...answer, noindex: true };
    return { ...answer, cacheControl: PROTECTED_CACHE_CONTROL, noindex: true, protected: true };
  };

  const writeList = (res: HttpResponse, list: HeaderList): void => {
    for (const [name, value] of list) res.writeHeader(name, value);
  };
  const recordOf = (list: HeaderList): Headers => Object.fromEntries(list);

  /** A status page or redirect; `protect`: an answer of a protected site, private whatever it says. */
  const sendPage = (
    res: HttpResponse,
    status: StatusPageCode | RedirectCode,
    head: boolean,
    extra: Headers = {},
    siteName?: string,
    site?: SiteHeaders,
    protect = false,
  ): void => {
    const body = isRedirect(status) ? '' : statusPage(status, siteName === undefined ? undefined : { siteName });
    const cacheControl = status === 404 ? 'public, max-age=60' : 'no-store';
    const headers = site === undefined ? undefined : siteHeadersBlock(cacheControl, extra, site, protect);
    writeResponse(res, status, headers ?? recordOf(pageHeaders(cacheControl, extra, site, protect)), body, { head });
  };

  /**
   * A status page's headers with a site's `_headers` applied, as one `writeHeader` value
   * (`joinAfterFirst`), made once per merged set of blocks: a rules file may add a hundred headers
   * to every path that has no file, each of which would otherwise cost a native call per answer.
   */
  const siteHeaderBlocks = new WeakMap<SiteHeaders, Map<string, Headers>>();
  const siteHeadersBlock = (cacheControl: string, extra: Headers, site: SiteHeaders, protect: boolean): Headers | undefined => {
    const variant = extra === NOINDEX ? 'noindex' : Object.keys(extra).length === 0 ? '' : undefined;
    if (variant === undefined) return undefined;
    let blocks = siteHeaderBlocks.get(site);
    if (blocks === undefined) siteHeaderBlocks.set(site, (blocks = new Map()));
    const key = `${cacheControl}|${variant}|${protect}`;
    let headers = blocks.get(key);
    if (headers === undefined) {
      const list = pageHeaders(cacheControl, extra, site, protect);
      blocks.set(key, (headers = { [list[0]![0]]: joinAfterFirst(list).toString('latin1') }));
    }
    return headers;
  };

  const sendRevisionGone = (res: HttpResponse, head: boolean, extra: Headers, siteName: string, protect: boolean): void =>
    writeResponse(res, 410, recordOf(pageHeaders('no-store', extra, undefined, protect)), statusPage(410, { siteName, revisionGone: true }), { head });

  /** A folder's address without its slash, or a `_redirects` redirect; the request's query goes along. */
  const sendRedirect = (
    res: HttpResponse,
    req: SiteRequest,
    redirect: NonNullable<Target['redirect']>,
    head: boolean,
    extra: Headers,
    protect: boolean,
  ): void => {
    const location = redirect.ownQuery ? redirect.location : withRequestQuery(redirect.location, req.getQuery() ?? '');
    // Short-lived like HTML: the next deploy may change the rules. A protected site's stay private.
    sendPage(
      res,
      redirect.status as RedirectCode,
      head,
      { Location: location, 'Cache-Control': 'public, max-age=60', ...extra },
      undefined,
      undefined,
      protect,
    );
  };

  /**
   * Send, prepared: a whole, unbadged body from memory, with every header precomputed per target,
   * so a request costs a few header lookups and no allocation of its own. False when the request
   * needs the general path (HEAD, ranges, large files).
   */
  const sendPrepared = (res: HttpResponse, req: SiteRequest, cached: CachedSite, target: Target): boolean => {
    const ok = target.status === 200;
    if (ok && !target.html && req.getHeader(HEADER_NAMES.range) !== '') return false;
    const encoding = target.varies ? chooseEncoding(req.getHeader(HEADER_NAMES.acceptEncoding), target.encodings) : undefined;
    // One object per representation holds all the answer needs but the body's bytes.
    let ready = encoding === undefined ? target.identity : encoding === 'br' ? target.br : target.gzip;
    if (ready === undefined) {
      // A variant not recorded yet is made (or waited for) on the general path, for the second or so until it is.
      if (encoding !== undefined && target.unrecorded) return false;
      ready = readyOf(cached, target, encoding);
    }
    if (ready.size > config.streamThresholdBytes) return false;
    if (ok) {
      const ifNoneMatch = req.getHeader(HEADER_NAMES.ifNoneMatch);
      if (ifNoneMatch !== '' && (ifNoneMatch === ready.etag || matchesIfNoneMatch(ifNoneMatch, ready.etag))) {
        res.writeStatus('304 Not Modified');
        res.writeHeader(HEADER_NAMES.etag, ready.notModified);
        ends.endWithoutBody(res, 304);
        sentStatus = 304;
        sentBytes = 0;
        return true;
      }
    }
    // The bytes the `Ready` holds, marked as used for the body cache's eviction (written only when
    // it changes); or from the cache, which may hand them to the `Ready` for next time. Before the
    // first write: a body that is not on this node stops here (`BlobNotLocal`).
    let bytes = ready.held;
    if (bytes === undefined) bytes = bodies.hold(ready, target, encoding);
    else if (!ready.used) ready.used = true;
    if (!ok) res.writeStatus(target.status === 404 ? '404 Not Found' : '410 Gone');
    res.writeHeader(HEADER_NAMES.contentType, ready.full);
    if (ready.size <= END_COPY_MAX_BYTES) ends.end(res, target.status, bytes, ready.size);
    else endFromMemory(res, bytes instanceof ArrayBuffer ? Buffer.from(bytes) : bytes);
    sentStatus = target.status;
    sentBytes = ready.size;
    return true;
  };

  /**
   * A target's representation for the prepared path, made on its first request and kept on the
   * target: the identity one in the target's own fields (site-cache.ts `Target`), a variant in a
   * `Ready` of its own.
   */
  const readyOf = (cached: CachedSite, target: Target, encoding: Encoding | undefined): Ready => {
    const entry = target.entry!;
    const size = encoding ? entry.encodings![encoding]! : entry.size;
    const answer = answerOf(target, entry.type, target.varies, blobEtag(entry.sha256, encoding), encoding);
    const etag = answer.etag ?? '';
    // Packed in the site's slabs, which its weight in the site cache counts.
    const full = sites.pack(cached, fileHeaders(answer));
    const notModified = sites.pack(cached, notModifiedHeaders({ ...answer, etag }));
    if (encoding === undefined) {
      target.size = size;
      target.full = full;
      target.notModified = notModified;
      target.etag = etag;
      target.identity = target;
      return target;
    }
    // What a request reads first (its fields' order is the object's layout).
    const ready: Ready = { held: undefined, used: false, size, full, notModified, etag, heldFrom: undefined };
    if (encoding === 'br') target.br = ready;
    else target.gzip = ready;
    return ready;
  };

  /** Send: a body in memory (or only its headers), a range of it, or a 304. */
  const sendBody = (res: HttpResponse, target: Target, answer: FileAnswer, body: Buffer | undefined, size: number, asked: Asked, path?: string): void => {
    if (answer.etag !== undefined && asked.ifNoneMatch !== '' && matchesIfNoneMatch(asked.ifNoneMatch, answer.etag)) {
      res.writeStatus('304 Not Modified');
      writeList(res, notModifiedHeaders({ ...answer, etag: answer.etag }));
      res.endWithoutBody();
      // Also sent after an await (a badged page built elsewhere, a fetched blob): done.
      markFinished(res);
      sentStatus = 304;
      sentBytes = 0;
      return;
    }
    let start = 0;
    let end = size - 1;
    let status: number = target.status;
    if (asked.range !== '') {
      const range = parseRange(asked.range, size);
      if (range === 'unsatisfiable') {
        const list: HeaderList = [['Content-Range', `bytes */${size}`], ...SECURITY_HEADERS];
        return writeResponse(res, 416, recordOf(answer.protected ? protectedHeaders(list) : list), '', { head: asked.head });
      }
      if (range) {
        ({ start, end } = range);
        status = 206;
        answer = { ...answer, contentRange: `bytes ${start}-${end}/${size}` };
      }
    }
    const headers = recordOf(fileHeaders(answer));
    sentStatus = status;
    sentBytes = asked.head ? 0 : end - start + 1;
    if (body) {
      const bytes = start === 0 && end === size - 1 ? body : body.subarray(start, end + 1);
      if (asked.head || bytes.byteLength <= END_COPY_MAX_BYTES) return writeResponse(res, status, headers, bytes, { head: asked.head });
      if (status !== 200) res.writeStatus(statusLine(status));
      for (const name in headers) res.writeHeader(name, headers[name]!);
      return endFromMemory(res, bytes);
    }
    if (asked.head) return writeResponse(res, status, headers, '', { head: true, headLength: end - start + 1 });
    streamFile(res, { path: path!, start, end, status, headers, log });
  };

  /**
   * Body and send for a stored file: a precompressed form or the identity bytes, ranges allowed.
   * `mayWait`: a variant being made off this thread may be waited for (`VariantPending`); once
   * waited for, the request takes the identity bytes rather than wait again.
   */
  const sendFile = (res: HttpResponse, target: Target, asked: Asked, privacy: Privacy | undefined, mayWait: boolean): void => {
    const entry = target.entry!;
    // A byte range always addresses the identity bytes, and only while If-Range names them.
    const range = target.status === 200 && !target.html && ifRangeHolds(asked.ifRange, blobEtag(entry.sha256, undefined)) ? asked.range : '';
    let encoding = range === '' ? chooseEncoding(asked.acceptEncoding, target.encodings) : undefined;
    // A variant not recorded yet: made from the blob, the same bytes as the one stored later (its size too, for a HEAD).
    let made: Buffer | undefined;
    if (encoding !== undefined && target.unrecorded) {
      const found = bodies.unrecorded(entry, encoding);
      if (found instanceof Promise && mayWait) throw new VariantPending(found);
      if (found instanceof Buffer) made = found;
      else encoding = undefined;
    }
    const size = made !== undefined ? made.byteLength : encoding ? entry.encodings![encoding]! : entry.size;
    const answer = answerOf(target, entry.type, target.encodings.length > 0, blobEtag(entry.sha256, encoding), encoding, privacy);
    // Only a body that goes out needs its bytes: a 304 or a HEAD never waits for a download.
    const sendsBody = !asked.head && !(answer.etag !== undefined && asked.ifNoneMatch !== '' && matchesIfNoneMatch(asked.ifNoneMatch, answer.etag));
    // A made variant has no file to stream.
    const inMemory = made !== undefined || size <= config.streamThresholdBytes;
    const body = sendsBody && inMemory ? (made ?? bodies.blob(entry, encoding)) : undefined;
    // Streamed from its file: one still in the blob journal only is written first (`fetch`).
    if (sendsBody && !inMemory && !store.blobs.isLocal(entry.sha256, encoding, true)) throw new BlobNotLocal(entry.sha256, encoding, packedRangeOf(entry));
    sendBody(res, target, answer, body, size, { ...asked, range }, store.blobs.pathOf(entry.sha256, encoding));
  };

  /** Body and send for a page with the badge: its own bytes, ETags and compressed forms. */
  const sendBadged = (res: HttpResponse, target: Target, entry: FileEntry, page: BadgedPage, asked: Asked, privacy?: Privacy): void => {
    const available = ENCODINGS.filter((encoding) => page[encoding] !== undefined);
    const encoding = chooseEncoding(asked.acceptEncoding, available);
    const body = encoding ? page[encoding]! : page.identity;
    const answer = answerOf(target, entry.type, available.length > 0, body.etag, encoding, privacy);
    sendBody(res, target, answer, body.bytes, body.bytes.byteLength, { ...asked, range: '' });
  };

  /**
   * Site: the record and its state decide the answer, or lead on to its live revision. A former
   * name leads to the same address under the current one: a preview's (`preview`) to the same
   * revision's preview, not to the live site.
   */
  const siteStep = (
    res: HttpResponse,
    req: SiteRequest,
    siteName: string,
    head: boolean,
    cached: CachedSite | undefined,
    preview: number | undefined,
  ): (CachedSite & { site: { liveRevision: string } }) | undefined => {
    if (cached === undefined) return void sendPage(res, 404, head);
    const site = cached.site;
    const protect = site.access !== undefined;
    if (site.name !== siteName) {
      const query = req.getQuery();
      const label = preview === undefined ? site.name : previewLabel(site.name, preview);
      const location = `${options.siteUrl(label)}${req.getUrl()}${query ? `?${query}` : ''}`;
      return void sendPage(res, 301, head, { Location: location, 'Cache-Control': 'public, max-age=300' }, undefined, undefined, protect);
    }
    // The clock only for a site that can expire (an unclaimed one): a native call per request otherwise.
    if (site.state === 'deleted' || (site.expiresAt !== undefined && isExpired(site, now())))
      return void sendPage(res, 410, head, {}, siteName, undefined, protect);
    if (site.state === 'taken_down') return void sendPage(res, 451, head, {}, siteName, undefined, protect);
    if (site.liveRevision === undefined) return void sendPage(res, 404, head, {}, siteName, undefined, protect);
    return cached as CachedSite & { site: { liveRevision: string } };
  };

  /**
   * The bytes were not on this node: copy what the steps read of the request (it dies with this
   * handler), wait for the download, then answer again from the start, corked, unless the client
   * left. A bucket that cannot be reached gets a 503 page; the cached files of this node are
   * served meanwhile all the same.
   */
  const fetchThenAnswer = (
    res: HttpResponse,
    req: SiteRequest,
    siteName: string,
    missing: BlobNotLocal,
    fetches: number,
    route: Route,
    protect: boolean,
  ): void => {
    const copy = copyServedRequest(req, ANSWER_HEADERS);
    const head = copy.getMethod() === 'head';
    trackAbort(res);
    store.blobs.fetch(missing.sha256, missing.encoding, missing.packed).then(
      () => {
        // The gate already let this request in; the copy keeps no credentials to show it again.
        if (!isAborted(res)) res.cork(() => answer(res, copy, siteName, fetches + 1, { ...route, granted: true }));
      },
      (err: unknown) => {
        if (isBucketUnavailable(err)) log.warn({ err, site: siteName }, 'serve.bucket_unavailable');
        else log.error({ err, site: siteName }, 'serve.fetch_failed');
        if (isAborted(res)) return;
        res.cork(() =>
          isBucketUnavailable(err)
            ? sendPage(res, 503, head, { 'Retry-After': BUCKET_RETRY_AFTER_S }, siteName, undefined, protect)
            : sendPage(res, 500, head, {}, undefined, undefined, protect),
        );
      },
    );
  };

  /** A variant is being made off this thread: answer again, corked, once it is (unless the client left). */
  const waitThenAnswer = (res: HttpResponse, req: SiteRequest, siteName: string, made: Promise<void>, fetches: number, route: Route): void => {
    const copy = copyServedRequest(req, ANSWER_HEADERS);
    trackAbort(res);
    // `made` never rejects: a failed compression leaves the request to the identity bytes.
    void made.then(() => {
      // The gate already let this request in; the copy keeps no credentials to show it again.
      if (!isAborted(res)) res.cork(() => answer(res, copy, siteName, fetches, { ...route, granted: true }));
    });
  };

  /**
   * The slow lane of protected sites and previews: the gate (the site's own access, or for a
   * preview of a public site that keeps previews to members, a members-only rule), then the
   * revision a preview address names. Returns the revision to serve and how the answer differs,
   * or undefined once answered.
   */
  const gateStep = (res: HttpResponse, req: SiteRequest, site: SiteRecord & { liveRevision: string }, siteName: string, route: Route, fetches: number) => {
    const head = req.getMethod() === 'head';
    const access = accessOfHost(site, route.preview !== undefined);
    if (access !== undefined && !route.granted) {
      const label = hostLabel(site.name, route);
      if (options.gate === undefined) return void sendPage(res, 404, head, {}, siteName, undefined, true);
      const proceed = (copy: SiteRequest): void => answer(res, copy, siteName, fetches, { ...route, granted: true });
      if (!options.gate.admit(res, req, access === site.access ? site : { ...site, access }, label, proceed)) return undefined;
    }
    const privacy = access !== undefined ? PROTECTED_PRIVACY : PREVIEW_PRIVACY;
    if (route.preview === undefined) return { revision: site.liveRevision, privacy };
    const revision = previewRevision(store, site, route.preview, now());
    const protect = privacy.protected === true;
    if (revision === undefined) return void sendPage(res, 404, head, NOINDEX, siteName, undefined, protect);
    // Deleted by its owner: gone for good, whatever the path or credential (its number is never reused).
    if (revision.deletedAt !== undefined) return void sendRevisionGone(res, head, NOINDEX, siteName, protect);
    return { revision: revision.id, privacy };
  };

  /** Counts the answer a send step just gave (`sentStatus`, `sentBytes`): a page view, or a file or 404. */
  const count = (address: string, url: string, userAgent: string, req: SiteRequest, site: SiteRecord, target: Target): void => {
    if (sentStatus === 0) return;
    if (target.html && (sentStatus === 200 || sentStatus === 304)) visits!.page(site.id, site.name, address, url, userAgent, req, sentBytes);
    else visits!.other(site.id, site.name, sentStatus === 404, sentBytes);
    sentStatus = 0;
  };

  /** Site → (gate) → target → body → headers → send; `fetches` counts the downloads this request waited for. */
  const answer = (res: HttpResponse, req: SiteRequest, siteName: string, fetches: number, route: Route, knownMethod?: 'get'): void => {
    const method = knownMethod ?? req.getMethod();
    const head = method === 'head';
    // Once the site is known: its answers are private whatever happens, errors included.
    let protect = false;
    try {
      const cached = sites.lookup(siteName);
      // A live site's own address moves to its primary domain, before anything else is asked;
      // only a site whose domains ever changed can have one (most pay for this field check).
      if (route === publicRoute && cached?.site.domainsChangedAt !== undefined && options.domains !== undefined) {
        const primary = options.domains.siteRedirect(siteName);
        if (primary !== undefined) return options.domains.redirect(res, req, primary);
      }
      if (method !== 'get' && !head) {
        // The password form of a protected site is the one thing a site host takes a POST for.
        if (method === 'post' && req.getUrl() === ACCESS_PATHS.login && options.gate !== undefined) {
          const live = siteStep(res, req, siteName, false, cached, route.preview);
          if (live === undefined) return;
          if (live.site.access?.mode === 'password') return options.gate.postLogin(res, req, live.site, hostLabel(live.site.name, route));
        }
        return sendPage(res, 405, false, { Allow: 'GET, HEAD' }, undefined, undefined, cached?.site.access !== undefined);
      }
      const live = siteStep(res, req, siteName, head, cached, route.preview);
      if (live === undefined) return;
      const site = live.site;
      protect = site.access !== undefined;
      // Analytics count the live site's GET answers (not previews, not HEAD).
      const counted = visits !== undefined && !head && route.preview === undefined;
      sentStatus = 0;
      let revision = site.liveRevision;
      let privacy: Privacy | undefined;
      // Public sites' live answers pay for this one field check only.
      if (site.access !== undefined || route.preview !== undefined) {
        const gated = gateStep(res, req, site, siteName, route, fetches);
        if (gated === undefined) return;
        ({ revision, privacy } = gated);
        protect ||= privacy.protected === true;
      }
      // The query is read only where rules may test it (a redirect reads it when it is sent).
      const query = revision !== site.liveRevision || live.rules?.redirects?.usesQuery === true ? (req.getQuery() ?? '') : '';
      // The host only where the live rules name one.
      const byHost = live.rules?.redirects?.usesHost === true || live.rules?.headers?.usesHost === true;
      const url = req.getUrl();
      const target = sites.target(live, revision, url, query, byHost ? requestHost(siteName, route) : undefined);
      const privateHeaders = privacy === undefined ? NO_HEADERS : NOINDEX;
      if (target.error !== undefined) return sendPage(res, target.error, head, {}, undefined, undefined, protect);
      const entry = target.entry;
      if (entry === undefined) {
        if (target.redirect !== undefined) return sendRedirect(res, req, target.redirect, head, privateHeaders, protect);
        if (target.status === 410) {
          // A page `_redirects` marks as gone, not the site: its own page text.
          const headers = recordOf(pageHeaders('public, max-age=60', privateHeaders, target.site, protect));
          return writeResponse(res, 410, headers, statusPage(410, { siteName, pageGone: true }), { head });
        }
        if (counted) visits!.other(site.id, site.name, true, 0);
        return sendPage(res, 404, head, privateHeaders, siteName, target.site, protect);
      }

      const badged = target.html && hasBadge(site.plan);
      // A page view's client, read while the response may still be touched (uWS forbids it once
      // ended). Reading the address is the largest part of what counting costs (uWS asks the
      // kernel each time and hands the bytes over in a fresh ArrayBuffer; it cannot be kept per
      // connection), so it is left unread where it cannot matter: a request without a user agent
      // is a crawler's, and behind a number of trusted proxies X-Forwarded-For names the client
      // (analytics-flush.ts). Its raw bytes are made text here, cheaper than uWS's text form.
      const userAgent = counted && target.html ? req.getHeader(HEADER_NAMES.userAgent) : '';
      const address =
        userAgent === '' || (forwardedNamesClient && req.getHeader(HEADER_NAMES.xForwardedFor) !== '') ? '' : remoteAddressText(res.getRemoteAddress());
      // The prepared path ends responses uWS-style, for the synchronous handler only.
      if (!head && !badged && fetches === 0 && privacy === undefined && sendPrepared(res, req, live, target))
        return counted ? count(address, url, userAgent, req, site, target) : undefined;
      const asked: Asked = {
        head,
        acceptEncoding: req.getHeader(HEADER_NAMES.acceptEncoding),
        ifNoneMatch: req.getHeader(HEADER_NAMES.ifNoneMatch),
        range: req.getHeader(HEADER_NAMES.range),
        ifRange: '',
      };
      if (asked.range !== '') asked.ifRange = req.getHeader(HEADER_NAMES.ifRange);
      if (!badged) {
        sendFile(res, target, asked, privacy, route.variantWaited !== true);
        return counted ? count(address, url, userAgent, req, site, target) : undefined;
      }

      const page = bodies.badged(entry, { siteName: site.name, reportUrl: reportUrl(site.name) });
      if (!(page instanceof Promise)) {
        sendBadged(res, target, entry, page, asked, privacy);
        return counted ? count(address, url, userAgent, req, site, target) : undefined;
      }
      if (counted) {
        // Counted now, while the request can still be read; its bytes are not known yet.
        sentStatus = target.status;
        sentBytes = 0;
        count(address, url, userAgent, req, site, target);
      }
      // A large page is being built in a worker: answer when it is ready.
      trackAbort(res);
      page.then(
        (built) => {
          if (!isAborted(res)) res.cork(() => sendBadged(res, target, entry, built, asked, privacy));
        },
        (err: unknown) => {
          log.error({ err, site: siteName }, 'serve.failed');
          if (!isAborted(res)) res.cork(() => sendPage(res, 500, head, {}, undefined, undefined, protect));
        },
      );
    } catch (err) {
      if (err instanceof BlobNotLocal && fetches < MAX_FETCHES) return fetchThenAnswer(res, req, siteName, err, fetches, route, protect);
      if (err instanceof VariantPending) return waitThenAnswer(res, req, siteName, err.made, fetches, { ...route, variantWaited: true });
      log.error({ err, site: siteName }, 'serve.failed');
      sendPage(res, 500, head, {}, undefined, undefined, protect);
    }
  };

  /** The host a request came by (lower-case, no port): a custom domain, or the site's or preview's own. */
  const requestHost = (siteName: string, route: Route): string => route.domain ?? new URL(options.siteUrl(hostLabel(siteName, route))).hostname;

  const publicRoute: Route = {};
  const handle = (res: HttpResponse, req: HttpRequest, siteName: string, preview?: number, domain?: string, method?: 'get'): void =>
    answer(res, req, siteName, 0, preview === undefined && domain === undefined ? publicRoute : { preview, domain }, method);

  return {
    handle,
    cacheStats: () => ({
      bodyBytes: bodies.weight,
      sites: sites.size,
      siteBytes: sites.weight,
      badgedPagesBuiltElsewhere: bodies.builtElsewhere,
      variantsMadeOnDemand: bodies.variantsMade,
      lookups: { ...sites.counts },
    }),
  };
}

type RedirectCode = 301 | 302 | 303 | 307 | 308;
const isRedirect = (status: number): status is RedirectCode => status >= 301 && status <= 308;

/**
 * A preview's revision number or the custom domain asked for, whether the gate already let this
 * request in (after an await), and whether it waited for a variant being made.
 */
interface Route {
  preview?: number;
  domain?: string;
  granted?: boolean;
  variantWaited?: boolean;
}

/** The host the gate binds cookies and tickets to: `<name>`, `<number>--<name>`, or the custom domain. */
function hostLabel(siteName: string, route: Route): string {
  if (route.domain !== undefined) return route.domain;
  return route.preview === undefined ? siteName : previewLabel(siteName, route.preview);
}
