import { createHmac } from 'node:crypto';
import { isbot } from 'isbot';
import type { AnalyticsConfig } from '../config.js';
import { clientAddress, networkOf } from '../http/index.js';
import type { Logger } from '../log.js';
import {
  addDays,
  ANALYTICS_DAY_MS,
  countedPath,
  countedReferrerHost,
  dayStart,
  isOwnReferrer,
  referrerHostname,
  utcDay,
  type ProxyTrust,
} from '../rules/index.js';
import type { AnalyticsRecords, SiteDayVisits } from '../store/index.js';
import { FIELD, type VisitBatch, type VisitCounter } from './visits.js';

/**
 * Writes what a thread's visit counter holds to the store, at least every `flushMs` and at each
 * UTC midnight (so a batch never spans two days), and once more when the thread stops. A crash
 * loses what was counted since the last flush: at most one interval (docs/analytics.md).
 */
export interface AnalyticsFlusher {
  /** Writes what is counted now (tests; the stop). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>;
}

export interface AnalyticsFlushOptions {
  store: Pick<AnalyticsRecords, 'analyticsSalt' | 'addVisits' | 'forgetVisitors'>;
  counter: VisitCounter;
  config: AnalyticsConfig;
  trustProxy: ProxyTrust;
  /** A site's own host names: a visit from one of its own pages names no referrer (see `OwnHosts`). */
  ownHosts: OwnHosts;
  now: () => number;
  log: Logger;
}

/** Stands for a connection's address that serving did not read. */
const UNREAD_ADDRESS = '0.0.0.0';

/**
 * `isbot`'s verdicts by user agent, kept across flushes: its list is one large regular expression,
 * the costliest step of a flush per entry, and a site's visitors send the same few thousand
 * strings day after day. Bounded in count and in length (a longer one is asked each time).
 */
const crawlerVerdicts = new Map<string, boolean>();
const VERDICTS_KEPT = 10_000;
const VERDICT_KEPT_MAX_LENGTH = 512;

/** Whether a user agent is a crawler's: the `isbot` package's maintained list, and no user agent at all. */
export function isCrawler(userAgent: string): boolean {
  if (userAgent.trim() === '') return true;
  let verdict = crawlerVerdicts.get(userAgent);
  if (verdict === undefined) {
    verdict = isbot(userAgent);
    if (userAgent.length <= VERDICT_KEPT_MAX_LENGTH) {
      if (crawlerVerdicts.size >= VERDICTS_KEPT) crawlerVerdicts.clear();
      crawlerVerdicts.set(userAgent, verdict);
    }
  }
  return verdict;
}

/**
 * The visitor's keyed hash: HMAC-SHA256 of its network (IPv4 /24, IPv6 /64) and user agent under
 * the day's random salt, cut to 128 bits. Once the salt is dropped (after its day), nothing can
 * tie a hash to an address again; the address itself is never written anywhere.
 */
export function visitorHash(salt: string, network: string, userAgent: string): string {
  return createHmac('sha256', salt).update(network).update('\n').update(userAgent).digest('base64url').slice(0, 22);
}

/**
 * A site's own host names, by site id and name: its address under the site domain and its verified
 * custom domains. A referrer from one of them, or from its `www.` name, is a link within the site.
 */
export type OwnHosts = (siteId: string, siteName: string) => ReadonlySet<string>;

/** A batch as the store takes it: views split into pages, referrers, visitors and crawlers. */
export function summarizeBatch(batch: VisitBatch, day: string, salt: string, trustProxy: ProxyTrust, ownHosts: OwnHosts): SiteDayVisits[] {
  const out: SiteDayVisits[] = [];
  for (const tally of batch.sites.values()) {
    const pages = new Map<string, number>();
    const referrers = new Map<string, number>();
    const visitors = new Set<string>();
    // A visitor's views of several pages are several entries: hashed once per batch (the hash
    // needs the raw network, which lives no longer than the batch).
    const hashed = new Map<string, string>();
    let pageViews = tally.overflowViews;
    let crawlerViews = tally.crawlerViews;
    const own = ownHosts(tally.siteId, tally.siteName);
    for (const [key, count] of tally.views) {
      const [path, referer, address, forwarded, userAgent] = key.split(FIELD) as [string, string, string, string, string];
      if (isCrawler(userAgent)) {
        crawlerViews += count;
        continue;
      }
      pageViews += count;
      const counted = countedPath(path);
      pages.set(counted, (pages.get(counted) ?? 0) + count);
      const hostname = referer === '' ? undefined : referrerHostname(referer);
      if (hostname !== undefined && !isOwnReferrer(hostname, own)) {
        const host = countedReferrerHost(hostname);
        referrers.set(host, (referrers.get(host) ?? 0) + count);
      }
      // No address: not read, as X-Forwarded-For names the client behind trusted hops (a chain
      // shorter than the hops names none, and counts as the placeholder's network).
      const network = networkOf(clientAddress(address === '' ? UNREAD_ADDRESS : address, forwarded, trustProxy));
      const visitor = `${network}\n${userAgent}`;
      let hash = hashed.get(visitor);
      if (hash === undefined) {
        hash = visitorHash(salt, network, userAgent);
        hashed.set(visitor, hash);
      }
      visitors.add(hash);
    }
    out.push({
      siteId: tally.siteId,
      day,
      pageViews,
      crawlerViews,
      notFound: tally.notFound,
      bytes: tally.bytes,
      visitors: [...visitors],
      pages: [...pages],
      referrers: [...referrers],
    });
  }
  return out;
}

export function startAnalyticsFlush(options: AnalyticsFlushOptions): AnalyticsFlusher {
  const { store, counter, config, log, now } = options;
  // A flush that failed (PostgreSQL away, say) is tried once more with the next; then dropped.
  let retry: SiteDayVisits[] = [];
  let running: Promise<void> = Promise.resolve();
  let forgottenBefore = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const write = async (): Promise<void> => {
    const batch = counter.take();
    const earlier = retry;
    retry = [];
    let fresh: SiteDayVisits[] = [];
    if (batch.sites.size > 0) {
      const day = utcDay(batch.startedAt);
      fresh = summarizeBatch(batch, day, await store.analyticsSalt(day), options.trustProxy, options.ownHosts);
    }
    if (earlier.length + fresh.length > 0) {
      try {
        await store.addVisits([...earlier, ...fresh], config.maxItemsPerDay);
      } catch (err) {
        if (earlier.length > 0) log.warn({ err, sites: earlier.length }, 'analytics.dropped');
        retry = fresh;
        throw err;
      }
    }
    // Yesterday's hashes are still needed by a batch that began before midnight; older ones are not.
    const today = utcDay(now());
    if (forgottenBefore !== today) {
      forgottenBefore = today;
      await store.forgetVisitors(addDays(today, -1));
    }
  };

  const flush = (): Promise<void> => {
    running = running.then(write).catch((err: unknown) => log.warn({ err }, 'analytics.flush_failed'));
    return running;
  };

  const schedule = (): void => {
    if (stopped) return;
    const at = now();
    const untilMidnight = dayStart(utcDay(at))! + ANALYTICS_DAY_MS - at;
    timer = setTimeout(
      () => {
        void flush().finally(schedule);
      },
      Math.min(config.flushMs, untilMidnight + 1),
    );
    timer.unref();
  };
  schedule();

  return {
    flush,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await flush();
    },
  };
}
