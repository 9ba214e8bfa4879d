import { statfs, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AggregatorRegistry, collectDefaultMetrics, Registry, type PrometheusContentType } from 'prom-client';
import type { OpsConfig } from '../config.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import { gauge, type MetricFamily } from './metric-families.js';
import { judgeReadiness, type Readiness } from './readiness.js';
import { storeFamilies } from './thread-metrics.js';
import type { ThreadReport, ThreadReports } from './thread-reports.js';

/**
 * What the operator listener says about this node, gathered on the main thread: readiness (the
 * threads' own checks, the main store, the data disk, the replica) and the metrics of every
 * thread summed with the main thread's, through prom-client. A gathering is shared by callers
 * that arrive while it runs, and `/readyz` reuses one up to a second old, so a load balancer
 * polling often costs little. Only `/metrics` has the threads build their metric families: a
 * readiness check (the watch's every few seconds, a load balancer's) asks for their problems alone.
 */
export interface NodeHealth {
  readiness(): Promise<Readiness>;
  /** The Prometheus text exposition; undefined with `PLINTH_METRICS=0`. */
  metrics(): Promise<{ contentType: string; text: string } | undefined>;
  /** Logs each change of readiness (`node.unready` with the reason, `node.ready`) until stopped. */
  watch(intervalMs: number): () => void;
}

export interface NodeHealthOptions {
  config: Readonly<OpsConfig>;
  dataDir: string;
  /** The main thread's store: the replica in a cluster, and its own counters. */
  store: Store;
  threads: ThreadReports;
  isStopping: () => boolean;
  /** Bytes in the blob cache at its last trim (with a bucket). */
  cachedBlobBytes?: () => number | undefined;
  log: Logger;
}

/** How long a thread may take to answer before it counts as not answering. */
const THREAD_ANSWER_MS = 1000;
const READINESS_REUSE_MS = 1000;

interface Gathering {
  at: number;
  readiness: Readiness;
  reports: Array<ThreadReport | undefined>;
  /** Whether the threads' reports carry their metric families. */
  withMetrics: boolean;
}

export function createNodeHealth(options: NodeHealthOptions): NodeHealth {
  const { config, store } = options;
  const defaults = new Registry();
  // The main thread serves no request, so its event-loop delay needs no 10 ms sampling timer
  // (prom-client's default): sampled once a second. Each sample wakes the otherwise idle thread,
  // and a wake cost 0.15–0.5 ms of CPU on the shared machine; ten a second were 1–2 % of a busy
  // node's CPU per request (bench/RESULTS.md, "Serving back at the ceiling", fifth pass).
  if (config.metrics) collectDefaultMetrics({ register: defaults, eventLoopMonitoringPrecision: 1000 });
  // Each probe writes a file of its own: a gathering for /metrics and one for readiness may run
  // at once, and one's unlink of a shared file failed the other's (a node said unready, ENOENT).
  const probePrefix = join(options.dataDir, 'tmp', `ready-probe-${process.pid}-`);
  let probes = 0;
  let last: Gathering | undefined;
  // In flight: a gathering for readiness alone, and one with the threads' metrics.
  let running: Promise<Gathering> | undefined;
  let runningWithMetrics: Promise<Gathering> | undefined;

  /** A small write and its removal: a full disk, a quota or a read-only remount fails it. */
  async function probeWrite(): Promise<string | undefined> {
    const probePath = `${probePrefix}${++probes}`;
    try {
      await writeFile(probePath, 'ready\n');
      await unlink(probePath);
      return undefined;
    } catch (err) {
      await unlink(probePath).catch(() => undefined);
      const code = (err as NodeJS.ErrnoException).code;
      return code ?? (err instanceof Error ? err.message : String(err));
    }
  }

  async function freeBytes(): Promise<number | undefined> {
    try {
      const stats = await statfs(options.dataDir);
      return stats.bavail * stats.bsize;
    } catch {
      return undefined;
    }
  }

  function storeProblem(): string | undefined {
    try {
      store.isNameUsed('plinth-readiness-probe');
      return undefined;
    } catch (err) {
      return `the main thread's store cannot be read: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  async function gather(withMetrics: boolean): Promise<Gathering> {
    const [reports, free, writeError] = await Promise.all([options.threads.ask(THREAD_ANSWER_MS, withMetrics), freeBytes(), probeWrite()]);
    const readiness = judgeReadiness(
      {
        now: Date.now(),
        stopping: options.isStopping(),
        threads: reports.map((report) =>
          report === undefined ? { answered: false } : { answered: true, ...(report.problem ? { problem: report.problem } : {}) },
        ),
        storeProblem: storeProblem(),
        disk: { freeBytes: free, writeError },
        replica: store.cluster?.health(),
      },
      { minFreeBytes: config.minFreeBytes, maxReplicaLagMs: config.maxReplicaLagMs },
    );
    last = { at: Date.now(), readiness, reports, withMetrics };
    return last;
  }

  /** A gathering at most `maxAgeMs` old; `withMetrics`: one whose reports carry the threads' metrics. */
  function gathering(maxAgeMs: number, withMetrics: boolean): Promise<Gathering> {
    if (last !== undefined && Date.now() - last.at <= maxAgeMs && (last.withMetrics || !withMetrics)) return Promise.resolve(last);
    if (withMetrics) {
      runningWithMetrics ??= gather(true).finally(() => {
        runningWithMetrics = undefined;
      });
      return runningWithMetrics;
    }
    if (runningWithMetrics !== undefined) return runningWithMetrics;
    running ??= gather(false).finally(() => {
      running = undefined;
    });
    return running;
  }

  function mainFamilies({ readiness }: Gathering): MetricFamily[] {
    const families = [
      ...storeFamilies(store.counters()),
      gauge('plinth_ready', 'Whether this node can serve, as GET /readyz says (1) or not (0).', [{ value: readiness.ready ? 1 : 0, labels: {} }]),
    ];
    const free = readiness.checks.disk.free_bytes;
    if (typeof free === 'number')
      families.push(gauge('plinth_data_disk_free_bytes', "Bytes free on the data directory's file system.", [{ value: free, labels: {} }]));
    const cached = options.cachedBlobBytes?.();
    if (cached !== undefined)
      families.push(gauge('plinth_blob_cache_bytes', "Bytes of blobs in this node's cache of the bucket, at its last trim.", [{ value: cached, labels: {} }]));
    const replica = store.cluster?.health();
    if (replica) {
      const lagMs = replica.behindSince === undefined ? 0 : Math.max(0, Date.now() - replica.behindSince);
      families.push(
        gauge('plinth_replica_applied_change', 'The last change of the log this replica applied.', [{ value: replica.applied, labels: {} }]),
        gauge('plinth_replica_head_change', 'The newest change of the log this replica has seen.', [{ value: replica.head, labels: {} }]),
        gauge('plinth_replica_lag_seconds', 'How long the replica has known of changes it has not applied (0: at the head).', [
          { value: lagMs / 1000, labels: {} },
        ]),
        gauge('plinth_replica_apply_failing', 'Whether the last try to apply the change log failed (1) or not (0).', [
          { value: replica.applyFailure ? 1 : 0, labels: {} },
        ]),
        gauge('plinth_database_up', "Whether PostgreSQL answered the replica's last poll (1) or not (0).", [
          { value: replica.databaseFailure ? 0 : 1, labels: {} },
        ]),
        gauge(
          'plinth_replica_unknown_writes_skipped',
          'Writes to record families this release does not know (a newer node wrote them), skipped since start.',
          Object.entries(replica.skippedWrites ?? {}).map(([db, count]) => ({ value: count, labels: { db } })),
        ),
      );
    }
    return families;
  }

  return {
    readiness: async () => (await gathering(READINESS_REUSE_MS, false)).readiness,
    async metrics() {
      if (!config.metrics) return undefined;
      const now = await gathering(0, true);
      const summed = AggregatorRegistry.aggregate<PrometheusContentType>([mainFamilies(now), ...now.reports.map((report) => report?.metrics ?? [])]);
      const registry = Registry.merge([defaults, summed]);
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
    watch(intervalMs) {
      // Logged when the set of failing checks changes, not at every tick of a disk filling up.
      let failing = '';
      const timer = setInterval(() => {
        void gathering(0, false).then(
          ({ readiness }) => {
            const now = Object.entries(readiness.checks)
              .filter(([, check]) => check !== undefined && !check.ok)
              .map(([name]) => name)
              .join(',');
            if (now === failing) return;
            const database = readiness.checks.database;
            if (!readiness.ready) options.log.warn({ failing: now, reason: readiness.reason }, 'node.unready');
            else if (database && !database.ok) options.log.warn({ failing: now, database: database.message }, 'node.ready_without_database');
            else options.log.info({}, 'node.ready');
            failing = now;
          },
          (err: unknown) => options.log.error({ err }, 'node.readiness_failed'),
        );
      }, intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
