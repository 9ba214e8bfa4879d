import { forwardedFor, HEADER_NAMES, type HttpRequest } from '../http/index.js';

/**
 * Analytics counted on the serving hot path (docs/analytics.md): per site, a few additions and one
 * Map entry per page view, in this thread's memory, nothing else. Everything that costs more (who
 * the visitor is, crawler or not, the referrer's host, the keyed hash) is worked out when the
 * batch is flushed (analytics-flush.ts), once per distinct value rather than once per request.
 */
export interface VisitCounter {
  /**
   * A GET answered with an HTML page, 200 or 304: `address` of the connection (read before the
   * answer; '' without a user agent), `url` the path asked for, `bytes` of body sent. A view
   * without a user agent is a crawler's, counted as that alone.
   */
  page(siteId: string, siteName: string, address: string, url: string, userAgent: string, req: Pick<HttpRequest, 'getHeader' | 'forEach'>, bytes: number): void;
  /** Any other GET answered for a site: a file, or a 404 (`notFound`). */
  other(siteId: string, siteName: string, notFound: boolean, bytes: number): void;
  /** What was counted since the last call, and a fresh batch from here on. */
  take(): VisitBatch;
}

/** One site's counts in a batch. */
export interface SiteTally {
  siteId: string;
  siteName: string;
  /** `path \0 referer \0 address \0 x-forwarded-for \0 user agent` of each page view → how many. */
  views: Map<string, number>;
  /** Page views past the batch's bound of distinct entries: counted, their details not kept. */
  overflowViews: number;
  /** Page views without a user agent: crawlers', counted without reading who sent them. */
  crawlerViews: number;
  notFound: number;
  bytes: number;
}

export interface VisitBatch {
  /** When the batch began (its day is this time's). */
  startedAt: number;
  sites: Map<string, SiteTally>;
  /** Distinct view entries in the batch, over all sites. */
  entries: number;
}

export interface VisitCounterOptions {
  now: () => number;
  /** Read `X-Forwarded-For` too (a trusted proxy names the client there). */
  readForwarded: boolean;
  /** Distinct view entries one batch holds; past it, views are counted without details. */
  maxEntries: number;
  /** Called once when the batch reaches `maxEntries`, so it is flushed early. */
  onFull?: () => void;
}

export const FIELD = '\u0000';

export function createVisitCounter(options: VisitCounterOptions): VisitCounter {
  const { now, readForwarded, maxEntries } = options;
  let batch: VisitBatch = { startedAt: now(), sites: new Map(), entries: 0 };

  // The tally last counted into: a thread serves the same site many times in a row, and the site
  // record hands over the same id string each time, so comparing references mostly replaces a Map
  // lookup per request (bench/RESULTS.md, "Serving back at the ceiling", third pass).
  let lastTally: SiteTally | undefined;
  const tallyOf = (siteId: string, siteName: string): SiteTally => {
    if (lastTally !== undefined && lastTally.siteId === siteId) return lastTally;
    let tally = batch.sites.get(siteId);
    if (tally === undefined) {
      tally = { siteId, siteName, views: new Map(), overflowViews: 0, crawlerViews: 0, notFound: 0, bytes: 0 };
      batch.sites.set(siteId, tally);
    }
    lastTally = tally;
    return tally;
  };

  // The last page view's parts and key. A visitor's requests on a kept-alive connection come to
  // one thread one after another, so the next view is often the same: then comparing four short
  // strings replaces building the key and hashing it (the key, hashed once, finds its entry fast).
  let last: { tally: SiteTally; url: string; referer: string; address: string; forwarded: string; userAgent: string; key: string } | undefined;

  return {
    page(siteId, siteName, address, url, userAgent, req, bytes) {
      if (userAgent === '') {
        const tally = tallyOf(siteId, siteName);
        tally.bytes += bytes;
        tally.crawlerViews++;
        return;
      }
      const referer = req.getHeader(HEADER_NAMES.referer);
      // Every line: a proxy may add its own after the client's (HAProxy), and `getHeader` gives
      // only the first, which the client wrote.
      const forwarded = readForwarded ? forwardedFor(req) : '';
      let key: string;
      let tally: SiteTally;
      if (
        last !== undefined &&
        last.tally.siteId === siteId &&
        last.url === url &&
        last.userAgent === userAgent &&
        last.address === address &&
        last.referer === referer &&
        last.forwarded === forwarded
      ) {
        ({ key, tally } = last);
      } else {
        tally = tallyOf(siteId, siteName);
        key = url + FIELD + referer + FIELD + address + FIELD + forwarded + FIELD + userAgent;
        last = { tally, url, referer, address, forwarded, userAgent, key };
      }
      tally.bytes += bytes;
      const seen = tally.views.get(key);
      if (seen !== undefined) {
        tally.views.set(key, seen + 1);
      } else if (batch.entries < maxEntries) {
        tally.views.set(key, 1);
        if (++batch.entries === maxEntries) options.onFull?.();
      } else {
        tally.overflowViews++;
      }
    },

    other(siteId, siteName, notFound, bytes) {
      const tally = tallyOf(siteId, siteName);
      tally.bytes += bytes;
      if (notFound) tally.notFound++;
    },

    take() {
      const taken = batch;
      last = undefined;
      lastTally = undefined;
      batch = { startedAt: now(), sites: new Map(), entries: 0 };
      return taken;
    },
  };
}
