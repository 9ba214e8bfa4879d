import type { Logger } from '../log.js';
import { addDays, analyticsReachDays, eventReachMs, PLAN_LIMITS, utcDay } from '../rules/index.js';
import type { DomainCheckReport } from '../sites/index.js';
import { collectBucketGarbage, type BucketOwner, type Store } from '../store/index.js';

/**
 * The periodic lifecycle pass (DESIGN "Storage"): expiry itself is decided at read time, so this
 * only reclaims space. It prunes revisions past each plan's history reach (anonymous sites keep
 * only their live revision), drops old rate-limit windows and spent OAuth records, then deletes blobs no revision
 * references and blob temp files whose writer died, and, with a blob bucket, the bucket's objects no revision references.
 * Blobs newer than the grace period are never collected, which keeps a deploy that
 * is writing blobs right now (its revision is not committed yet) safe.
 */
export interface SweeperOptions {
  store: Store;
  log: Logger;
  /** Blob files (and bucket objects) younger than this are kept even when unreferenced. */
  blobGraceMs: number;
  now?: () => number;
  /** Looks up the TXT records of custom domains that are due (sites' `createDomainChecker`). */
  checkDomains?: () => Promise<DomainCheckReport>;
  /** This installation: the bucket is collected only while its marker names it. */
  bucketOwner?: BucketOwner;
}

export interface SweepReport {
  sites: number;
  prunedRevisions: number;
  deletedBlobFiles: number;
  /** Objects deleted from the blob bucket (0 without one, or while another node collects it). */
  deletedBucketObjects: number;
  droppedCounterWindows: number;
  /** Expired manifests, sessions and sign-ins. */
  droppedExpired: number;
  /** Blob temp files of writers that died (a crashed ingest thread, a killed CLI). */
  deletedTempFiles: number;
  /** Expired OAuth codes and tokens, and OAuth grants revoked more than 30 days ago. */
  droppedOAuthRecords: number;
  /** Changes older than a week dropped from a cluster's change log. */
  droppedChanges: number;
  /** Audit log events past their site's or account's history reach. */
  droppedEvents: number;
  /** Webhook deliveries delivered or given up on more than a week ago. */
  droppedDeliveries: number;
  /** Days of site analytics past their plan's history reach. */
  prunedAnalyticsDays: number;
  /** Custom domains looked up, and how many became active, failed or were suspended. */
  domains: DomainCheckReport;
}

const DAY_MS = 24 * 3600_000;
/** A revoked OAuth grant is kept this long, so its old tokens are still known to be revoked. */
const REVOKED_GRANT_KEEP_MS = 30 * DAY_MS;
/**
 * A cluster's change log keeps a week: a node that was down for less catches up from its
 * position; one down for longer rebuilds its replica from a snapshot when it starts.
 */
const CHANGE_LOG_KEEP_MS = 7 * DAY_MS;
/** A webhook's delivery log keeps a week of finished deliveries. */
const DELIVERY_KEEP_MS = 7 * DAY_MS;

export async function sweep(options: SweeperOptions): Promise<SweepReport> {
  const { store } = options;
  const now = (options.now ?? Date.now)();
  options.log.debug({}, 'sweep.started');
  const siteIds = store.listSiteIds();
  const records = async () => {
    let prunedRevisions = 0;
    let prunedAnalyticsDays = 0;
    for (const siteId of siteIds) {
      const site = store.getSiteById(siteId);
      if (!site) continue;
      // Reach 0 (anonymous): everything older than the live revision, which pruning never
      // removes; drafts stored after it are current too (rules/history-reach.ts).
      const live = site.liveRevision === undefined ? undefined : store.getRevision(site.liveRevision);
      const before = PLAN_LIMITS[site.plan].historyReachMs === 0 ? (live?.createdAt ?? now + 1) : now - PLAN_LIMITS[site.plan].historyReachMs;
      prunedRevisions += await store.pruneRevisions(siteId, before);
      prunedAnalyticsDays += await store.pruneAnalytics(siteId, addDays(utcDay(now), 1 - analyticsReachDays(site.plan)));
    }
    const droppedCounterWindows = await store.pruneCounters(now - DAY_MS);
    const droppedExpired = await store.pruneExpired();
    const droppedOAuthRecords = await store.pruneOAuth(now - REVOKED_GRANT_KEEP_MS);
    const droppedChanges = store.cluster ? await store.cluster.pruneLog(now - CHANGE_LOG_KEEP_MS) : 0;
    const droppedEvents = await store.pruneEvents((scope) => eventCutoff(store, scope, now));
    const droppedDeliveries = await store.deliveries.prune(now - DELIVERY_KEEP_MS);
    return {
      prunedRevisions,
      droppedCounterWindows,
      droppedExpired,
      droppedOAuthRecords,
      droppedChanges,
      droppedEvents,
      droppedDeliveries,
      prunedAnalyticsDays,
    };
  };
  // In a cluster the records are shared: one node at a time tends to them; every node tends to its own files.
  const upkeep = (store.cluster ? await store.cluster.alone('records-upkeep', records) : await records()) ?? {
    prunedRevisions: 0,
    droppedCounterWindows: 0,
    droppedExpired: 0,
    droppedOAuthRecords: 0,
    droppedChanges: 0,
    droppedEvents: 0,
    droppedDeliveries: 0,
    prunedAnalyticsDays: 0,
  };
  // DNS lookups of custom domains: one node at a time, apart from the records' upkeep so that
  // slow lookups never hold that up.
  const noDomains: DomainCheckReport = { checked: 0, activated: 0, failed: 0, suspended: 0 };
  const checkDomains = options.checkDomains;
  const domains = checkDomains ? ((store.cluster ? await store.cluster.alone('domain-checks', checkDomains) : await checkDomains()) ?? noDomains) : noDomains;
  // With a bucket, the blob folder is this node's cache: what no revision references goes here
  // too. The bucket is every node's: one at a time collects it, last, so that a bucket that
  // cannot be reached fails the sweep only after this node's own upkeep.
  const deletedBlobFiles = await store.collectGarbage(options.blobGraceMs);
  const deletedTempFiles = await store.blobs.sweepTemp(options.blobGraceMs);
  const collectBucket = () => collectBucketGarbage(store, { graceMs: options.blobGraceMs, now: options.now, owner: options.bucketOwner });
  const deletedBucketObjects =
    store.blobs.bucket === undefined ? 0 : ((store.cluster ? await store.cluster.alone('bucket-gc', collectBucket) : await collectBucket()) ?? 0);
  const report = { sites: siteIds.length, ...upkeep, domains, deletedBlobFiles, deletedBucketObjects, deletedTempFiles };
  options.log.info({ ...report }, 'sweep.done');
  return report;
}

/** Events of a scope older than this are dropped: the plan's history reach of its site or account. */
function eventCutoff(store: Store, scope: string, now: number): number | undefined {
  const colon = scope.indexOf(':');
  const id = scope.slice(colon + 1);
  const plan = scope.startsWith('site:') ? store.getSiteById(id)?.plan : scope.startsWith('account:') ? store.getAccount(id)?.plan : undefined;
  return plan === undefined ? undefined : now - eventReachMs(plan);
}

/**
 * Runs `sweep` every `intervalMs` (never two at once); returns a stop function that resolves once
 * a sweep in progress has finished, so the store can be closed under it safely.
 */
export function startSweeper(options: SweeperOptions & { intervalMs: number }): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = sweep(options)
      .then(
        () => undefined,
        (err: unknown) => options.log.error({ err }, 'sweep.failed'),
      )
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
