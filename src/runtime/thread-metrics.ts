import { ERROR_STATUS, isErrorCode } from '../errors.js';
import type { SiteCacheStats } from '../serve/index.js';
import type { StoreCounters } from '../store/index.js';
import { counter, gauge, histogramCounts, type MetricFamily } from './metric-families.js';

/**
 * One HTTP thread's counters (CONVENTIONS "Metrics and logs for operators"): a request costs a
 * few array increments and a bucket lookup on this thread's own memory, nothing shared and no
 * prom-client call; the main thread asks for `families()` at scrape time and sums the threads.
 */

/** What a request's Host header led to; a label with these values only. */
export const HOST_KINDS = ['site', 'api', 'mcp', 'app', 'docs', 'domain', 'other'] as const;
export type HostKind = (typeof HOST_KINDS)[number];
export const HOST_KIND_INDEX: Readonly<Record<HostKind, number>> = Object.fromEntries(HOST_KINDS.map((kind, i) => [kind, i])) as Record<HostKind, number>;

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'aborted'] as const;
const ABORTED = STATUS_CLASSES.length - 1;

/** Request durations, seconds: serving from memory takes well under a millisecond, a deploy's API call many seconds. */
export const REQUEST_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;
/** Deploy durations, seconds: from admission to the answer, upload and unpacking included. */
export const DEPLOY_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] as const;

/** How a deploy ended: published (a draft too), a part of a digest deploy taken, refused with an error code, or cut off. */
export const DEPLOY_RESULTS = ['published', 'part', ...(Object.keys(ERROR_STATUS) as Array<keyof typeof ERROR_STATUS>), 'aborted'] as const;
export type DeployResult = (typeof DEPLOY_RESULTS)[number];

/** The ingest pool's load, read when asked. */
export interface IngestLoad {
  queued: number;
  inFlight: number;
  capacity: number;
}

export interface ThreadMetricSources {
  cache: SiteCacheStats;
  ingest: IngestLoad;
  store: StoreCounters;
}

export interface ThreadMetrics {
  /** A response ended (see http/response-meter.ts); `kind` indexes HOST_KINDS. */
  request(kind: number, status: number, bytes: number, ms: number, aborted: boolean): void;
  /**
   * A response ended within its handler, untimed (the meter's own ends, which the prepared path
   * uses): two array writes, folded into the request count and the first duration bucket when
   * the families are read, so /metrics shows what `request(kind, status, bytes, 0, false)` would.
   */
  answered(kind: number, status: number, bytes: number): void;
  deploy(result: DeployResult, ms: number): void;
  families(sources: ThreadMetricSources): MetricFamily[];
}

export function createThreadMetrics(): ThreadMetrics {
  const requests = new Float64Array(HOST_KINDS.length * STATUS_CLASSES.length);
  // Untimed answers by host kind and status class, not yet folded into `requests` and `durations`.
  const answeredUnfolded = new Float64Array(HOST_KINDS.length * STATUS_CLASSES.length);
  const bytesSent = new Float64Array(HOST_KINDS.length);
  const durations = histogramCounts(HOST_KINDS.length, REQUEST_SECONDS);
  const deploys = new Float64Array(DEPLOY_RESULTS.length);
  const deployDurations = histogramCounts(DEPLOY_RESULTS.length, DEPLOY_SECONDS);
  const deployIndex = new Map<string, number>(DEPLOY_RESULTS.map((result, i) => [result, i]));

  return {
    request(kind, status, bytes, ms, aborted) {
      const statusClass = aborted ? ABORTED : statusClassOf(status);
      requests[kind * STATUS_CLASSES.length + statusClass]!++;
      bytesSent[kind]! += bytes;
      durations.record(kind, ms / 1000);
    },
    answered(kind, status, bytes) {
      answeredUnfolded[kind * STATUS_CLASSES.length + statusClassOf(status)]!++;
      bytesSent[kind]! += bytes;
    },
    deploy(result, ms) {
      const at = deployIndex.get(result)!;
      deploys[at]!++;
      deployDurations.record(at, ms / 1000);
    },
    families({ cache, ingest, store }) {
      // The untimed answers counted since the last read: each took no time (the first bucket).
      for (let at = 0; at < answeredUnfolded.length; at++) {
        const count = answeredUnfolded[at]!;
        if (count === 0) continue;
        answeredUnfolded[at] = 0;
        requests[at]! += count;
        durations.recordMany(Math.floor(at / STATUS_CLASSES.length), 0, count);
      }
      const requestValues = [];
      for (let kind = 0; kind < HOST_KINDS.length; kind++) {
        for (let statusClass = 0; statusClass < STATUS_CLASSES.length; statusClass++) {
          const value = requests[kind * STATUS_CLASSES.length + statusClass]!;
          if (value > 0) requestValues.push({ value, labels: { host_kind: HOST_KINDS[kind]!, status: STATUS_CLASSES[statusClass]! } });
        }
      }
      return [
        counter('plinth_http_requests_total', 'Requests answered, by host kind and status class (aborted: the client went away first).', requestValues),
        durations.family('plinth_http_request_duration_seconds', 'Time from a request to the end of its answer, by host kind.', (kind) => ({
          host_kind: HOST_KINDS[kind]!,
        })),
        counter(
          'plinth_http_response_bytes_total',
          'Body bytes sent, by host kind.',
          HOST_KINDS.map((kind, i) => ({ value: bytesSent[i]!, labels: { host_kind: kind } })).filter((sample) => sample.value > 0),
        ),
        counter('plinth_serve_site_cache_lookups_total', "Lookups in the HTTP threads' caches of site records (cache=site) and resolved URLs (cache=path).", [
          { value: cache.lookups.siteHits, labels: { cache: 'site', result: 'hit' } },
          { value: cache.lookups.siteMisses, labels: { cache: 'site', result: 'miss' } },
          { value: cache.lookups.pathHits, labels: { cache: 'path', result: 'hit' } },
          { value: cache.lookups.pathMisses, labels: { cache: 'path', result: 'miss' } },
        ]),
        gauge('plinth_serve_site_cache_bytes', 'Estimated bytes of cached site records and resolved URLs, all HTTP threads.', [
          { value: cache.siteBytes, labels: {} },
        ]),
        gauge('plinth_serve_body_cache_bytes', 'Bytes of file bodies held in memory, all HTTP threads.', [{ value: cache.bodyBytes, labels: {} }]),
        counter(
          'plinth_deploys_total',
          'Deploys that ended, by result: published, part (of a deploy in parts), an error code, or aborted.',
          DEPLOY_RESULTS.map((result, i) => ({ value: deploys[i]!, labels: { result } })).filter((sample) => sample.value > 0),
        ),
        deployDurations.family('plinth_deploy_duration_seconds', 'Time from admitting a deploy to its answer, by result.', (at) => ({
          result: DEPLOY_RESULTS[at]!,
        })),
        gauge('plinth_ingest_queued_tasks', 'Deploy tasks waiting for an ingest worker.', [{ value: ingest.queued, labels: {} }]),
        gauge('plinth_ingest_tasks_in_flight', 'Deploy tasks admitted to the ingest pools and not finished (running or waiting).', [
          { value: ingest.inFlight, labels: {} },
        ]),
        gauge('plinth_ingest_capacity_tasks', 'Deploy tasks the ingest pools admit at once; past it deploys get 503.', [
          { value: ingest.capacity, labels: {} },
        ]),
        ...storeFamilies(store),
      ];
    },
  };
}

/** 1xx … 5xx as 0 … 4 (anything outside as the nearest). */
function statusClassOf(status: number): number {
  return Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1;
}

/** A deploy's result from how it ended. */
export function deployResultOf(outcome: { status?: number } | undefined, err?: unknown): DeployResult {
  if (err === undefined) return outcome?.status === 202 ? 'part' : 'published';
  const code = (err as { code?: unknown } | undefined)?.code;
  if (isErrorCode(code)) return code;
  return (err as { name?: unknown } | undefined)?.name === 'AbortError' ? 'aborted' : 'internal';
}

/** What a store handle counted; the main thread adds its own handle's with the same names. */
export function storeFamilies(store: StoreCounters): MetricFamily[] {
  return [
    counter('plinth_blob_cache_downloads_total', 'Blobs and variants downloaded from the bucket into the local cache.', [
      { value: store.downloads, labels: {} },
    ]),
    counter('plinth_blob_cache_download_bytes_total', 'Bytes downloaded from the bucket into the local cache.', [{ value: store.downloadedBytes, labels: {} }]),
    counter('plinth_bucket_errors_total', 'Calls to the blob bucket that failed (unreachable, timed out, refused; a missing object is no error).', [
      { value: store.bucketErrors, labels: {} },
    ]),
    counter('plinth_database_errors_total', 'Calls to PostgreSQL that failed.', [{ value: store.databaseErrors, labels: {} }]),
    counter(
      'plinth_rate_limited_total',
      'Requests refused by a rate cap, by the kind of cap.',
      Object.entries(store.rateLimited).map(([cap, value]) => ({ value, labels: { cap } })),
    ),
  ];
}
