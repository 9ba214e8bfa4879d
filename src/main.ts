import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import { loadConfig, redactConfig, serverConfigProblems, siteUrl, type Config } from './config.js';
import { createProcessSlots, type ProcessSlots } from './rules/index.js';
import { createLogger, type Logger } from './log.js';
import {
  bucketOptionsOf,
  checkBucket,
  claimBucket,
  connectStore,
  guardBlobCache,
  makeDataDir,
  markBlobCacheClean,
  ownerOf,
  REPLICA_POLL_MS,
  type BucketOwner,
  type Store,
} from './store/index.js';
import { startCacheTrimmer } from './runtime/blob-bucket.js';
import { lockDataDir, type DataDirLock } from './runtime/data-dir-lock.js';
import { checkPortFree } from './runtime/port-check.js';
import { setHeapGrowth } from './runtime/heap-growth.js';
import { startSweeper } from './runtime/sweeper.js';
import { createNodeHealth } from './runtime/node-health.js';
import { startOpsListener, type OpsListener } from './runtime/ops-listener.js';
import { createThreadReports } from './runtime/thread-reports.js';
import { answerTlsAsk } from './runtime/tls-ask.js';
import { createDomainServing } from './serve/index.js';
import { createTxtLookup } from './outbound/index.js';
import { createDomainChecker } from './sites/index.js';
import { loadNativeUws } from './http/index.js';

/**
 * Composition root of the process: validate config and the native server, prepare the data
 * directory, start `threads` HTTP threads on one port (SO_REUSEPORT spreads connections), and
 * stop them cleanly on SIGINT/SIGTERM.
 */

const STALE_TEMP_MS = 10 * 60 * 1000;
// How often the node looks at its own readiness, to log when it changes.
const READINESS_WATCH_MS = 5000;
// Beyond the grace period, what closing the pool and the store may take before a stop counts as stuck.
const STOP_SLACK_MS = 15_000;

type ThreadMessage = { type: 'listening'; port: number } | { type: 'failed'; message: string } | { type: 'stopped'; finished: boolean };

async function main(): Promise<void> {
  // By default SIGHUP ends a process at once, with no drain (a closed terminal, or a reload that
  // daemons take it for). Nothing here can be reloaded: settings are read at start and logs go
  // to standard output, which has no file to reopen. So it is said and otherwise ignored, from
  // the first moment: a node may take minutes to start (a cluster replica built from a snapshot),
  // and a hang-up then must not end it either.
  let hangupsWhileStarting = 0;
  let hangup = (): void => {
    hangupsWhileStarting++;
  };
  process.on('SIGHUP', () => hangup());
  // Before any thread allocates much (see heap-growth.ts).
  setHeapGrowth();
  let config: Readonly<Config>;
  try {
    config = loadConfig();
    const problems = serverConfigProblems(config);
    if (problems.length > 0) throw new Error(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    loadNativeUws({ fallbackRequested: config.uwsFallbackRequested });
  } catch (err) {
    refuse(err);
  }
  const log = createLogger({ level: config.logLevel });
  let serving = false;
  hangup = () =>
    log.warn(
      { signal: 'SIGHUP', note: `nothing to reload: settings apply at start; ${serving ? 'still serving' : 'still starting'}` },
      'server.hangup_ignored',
    );
  for (; hangupsWhileStarting > 0; hangupsWhileStarting--) hangup();
  log.info({ config: redactConfig(config) }, 'config.loaded');
  // As on the HTTP threads: one stray rejection (a sweep's write failing on a full disk) must not
  // take down every site this process serves.
  process.on('unhandledRejection', (err) => log.error({ err }, 'process.unhandled_rejection'));

  makeDataDir(config.dataDir);
  let dataDirLock: DataDirLock;
  try {
    // Before anything here touches the directory: a server running on it owns its spool.
    dataDirLock = await lockDataDir(config.dataDir);
    // Early, so that a busy port is told before a replica is built; again right before listening.
    if (config.port !== 0) await checkPortFree(config.listenHost, config.port);
  } catch (err) {
    refuse(err);
  }
  // Uploads spooled by a previous run that died mid-request; no request is in flight yet.
  rmSync(config.spoolDir, { recursive: true, force: true });
  const bucket = bucketOptionsOf(config);
  // The main thread keeps its own store handle for start-up cleanup and the sweeper. In a cluster
  // it builds the replica first if it must (before any HTTP thread opens it), and keeps it
  // current for every thread of the process.
  let store: Store;
  let bucketOwner: BucketOwner | undefined;
  try {
    // A wrong bucket name or key is told now, not as `500 internal` at the first deploy.
    if (bucket) await checkBucket(bucket);
    if (bucket) {
      // Before any thread writes blobs: a cache the machine's fall may have damaged is dropped.
      const guard = await guardBlobCache(join(config.dataDir, 'blobs'));
      if (guard.dropped > 0) log.warn({ files: guard.dropped }, 'blobs.cache_dropped_after_power_loss');
      if (!guard.guarded) log.info({}, 'blobs.cache_unguarded');
    }
    store = await connectStore({
      dir: config.dataDir,
      bucket,
      ...(config.databaseUrl
        ? {
            databaseUrl: config.databaseUrl,
            bootstrap: true,
            origin: `${process.pid}/main`,
            startWithoutDatabase: true,
            onClockOffset: (offsetMs: number) => (offsetMs === 0 ? log.info({}, 'cluster.clock_agrees') : log.warn({ offsetMs }, 'cluster.clock_differs')),
          }
        : {}),
    });
    if (bucket) {
      // Only the bucket's own installation may collect it (see store/bucket-owner.ts).
      bucketOwner = await ownerOf(store);
      const outcome = await claimBucket(bucket, bucketOwner, () => store.listSiteIds().length > 0).catch(async (err: unknown) => {
        await store.close();
        throw err;
      });
      log.info({ bucket: bucket.bucket, owner: bucketOwner, outcome }, 'bucket.owned');
    }
  } catch (err) {
    refuse(err);
  }
  const threads: Worker[] = [];
  let stopping = false;
  // A node that cannot go on exits with code 1 for its supervisor to start it again, its HTTP
  // threads stopped first without their grace period: exiting under a running uWS thread aborts
  // Node (SIGABRT) instead.
  const exitFailed = async (): Promise<never> => {
    stopping = true;
    const running = threads.filter((worker) => worker.threadId !== -1);
    const stopped = running.map((worker) => stopThread(worker));
    for (const worker of running) worker.postMessage({ type: 'hurry' });
    await Promise.race([Promise.all(stopped), delay(STOP_SLACK_MS)]);
    process.exit(1);
  };
  // A replica the log has moved past cannot be trusted: exit, and the next start rebuilds it.
  const stopFollowing = store.cluster
    ? await store.cluster.follow(
        REPLICA_POLL_MS,
        () => {
          if (stopping) return;
          log.error({ applied: store.cluster?.applied() }, 'cluster.replica_behind');
          void exitFailed();
        },
        // A newer node's records during a rolling upgrade: skipped, said once per family.
        (db, writes) => log.warn({ db, writes }, 'cluster.unknown_records_skipped'),
      )
    : undefined;
  if (store.cluster) {
    const { clusterId, schema } = store.cluster;
    log.info({ cluster: clusterId, applied: store.cluster.applied(), schema: schema.database }, 'cluster.following');
    // Said, not silent: nodes of a newer release migrated the database and declared that this one still works on it.
    if (schema.database > schema.known) log.warn({ schema: schema.database, known: schema.known }, 'cluster.schema_newer');
  }
  // Serving from the replica as it is; writes answer 503 until PostgreSQL answers.
  if (store.cluster && !store.cluster.connected()) log.warn({ applied: store.cluster.applied() }, 'cluster.started_without_database');
  // Blob temp files of deploys cut off by a crash or a kill: nothing of ours writes them yet.
  const swept = await store.blobs.sweepTemp(STALE_TEMP_MS, { atStartup: true });
  if (swept > 0) log.info({ files: swept }, 'blobs.temp_swept');

  // uWS does not share a port it was given as 0 between threads, so pick the port first.
  let port = config.port === 0 ? await findFreePort(config.listenHost) : config.port;
  try {
    await checkPortFree(config.listenHost, port);
  } catch (err) {
    refuse(err);
  }
  // Work that holds a thread of libuv's pool for long: one bound for all threads of the process.
  const slots = createProcessSlots();
  for (let index = 0; index < config.threads; index++) {
    const { worker, boundPort } = await startThread(config, port, index, slots, log);
    threads.push(worker);
    port = boundPort;
  }
  const stopSweeper =
    config.sweepIntervalMs > 0
      ? startSweeper({
          store,
          log: log.child({ area: 'sweeper' }),
          blobGraceMs: config.blobGraceMs,
          intervalMs: config.sweepIntervalMs,
          now: store.now,
          checkDomains: createDomainChecker({
            store,
            config,
            log: log.child({ area: 'domains' }),
            now: store.now,
            lookup: createTxtLookup(config.domains.dnsServers),
          }),
          bucketOwner,
        })
      : () => Promise.resolve();
  // This node's blob cache, kept within its budget (a bucket's objects are the sweeper's).
  const trimmer = store.blobs.bucket ? startCacheTrimmer({ blobs: store.blobs, log: log.child({ area: 'blobs' }) }) : undefined;

  const health = createNodeHealth({
    config: config.ops,
    dataDir: config.dataDir,
    store,
    threads: createThreadReports(threads),
    isStopping: () => stopping,
    cachedBlobBytes: trimmer?.cachedBytes,
    log: log.child({ area: 'ops' }),
  });
  const stopWatching = health.watch(READINESS_WATCH_MS);
  // Health, readiness, metrics and the TLS terminator's question (custom domains, answered from this node's replica).
  let ops: OpsListener | undefined;
  if (config.ops.port > 0) {
    const ask = answerTlsAsk({ serving: createDomainServing({ store, hosts: config.hosts, scheme: 'https' }), log: log.child({ area: 'tls-ask' }) });
    try {
      ops = await startOpsListener({
        host: config.ops.host,
        port: config.ops.port,
        log: log.child({ area: 'ops' }),
        ask,
        readiness: health.readiness,
        metrics: health.metrics,
      });
    } catch (err) {
      process.stderr.write(
        `plinth: cannot listen on ${config.ops.host}:${config.ops.port} (PLINTH_OPS_PORT): ${err instanceof Error ? err.message : String(err)}\n`,
      );
      await exitFailed();
    }
  }
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      // A second signal: the operator does not want to wait out the grace period.
      log.warn({ signal }, 'server.hurrying');
      for (const worker of threads) worker.postMessage({ type: 'hurry' });
      return;
    }
    stopping = true;
    log.info({ signal, graceMs: config.stopGraceMs }, 'server.stopping');
    stopWatching();
    const sweepStopped = Promise.all([stopSweeper(), trimmer?.stop()]);
    const stopped = threads.map((worker) => stopThread(worker));
    const outcome = await Promise.race([Promise.all(stopped), delay(config.stopGraceMs + STOP_SLACK_MS)]);
    if (outcome === undefined) {
      log.error({ graceMs: config.stopGraceMs }, 'server.stop_stuck');
      process.exit(1);
    }
    await sweepStopped;
    // Nothing writes blobs any more: synced, the cache is marked clean for the next start.
    if (bucket) await markBlobCacheClean(join(config.dataDir, 'blobs')).catch((err: unknown) => log.warn({ err }, 'blobs.cache_not_marked_clean'));
    // Open until the threads are done, so load balancers read "stopping" on /readyz meanwhile.
    await ops?.close();
    await stopFollowing?.();
    await store.close();
    await dataDirLock.release();
    log.info({ cutOff: outcome.filter((finished) => !finished).length }, 'server.stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  serving = true;
  for (const worker of threads) {
    worker.on('exit', (code) => {
      if (stopping) return;
      log.error({ code }, 'thread.exited');
      void exitFailed();
    });
  }
  dataDirLock.describe({ port });
  // Announced only once a stop signal would be handled: tools start sending (and stopping) at the banner.
  printBanner(config, port, ops?.port);
  log.info({ port, threads: threads.length }, 'server.listening');
}

/**
 * Young-generation cap of an HTTP thread's V8 heap. Left to itself V8 grows each thread's young
 * generation to 48 MB under steady traffic and gives it back only at an occasional memory-reducing
 * GC, so resident memory saw-toothed by about 35 MB per thread. Serving allocates little that
 * outlives a request, so a 12 MB cap (4 MB semi-spaces) costs a few more cheap scavenges and keeps
 * memory flat.
 */
const HTTP_THREAD_YOUNG_GEN_MB = 12;

function startThread(config: Readonly<Config>, port: number, index: number, slots: ProcessSlots, log: Logger): Promise<{ worker: Worker; boundPort: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./runtime/http-thread.js', import.meta.url), {
      workerData: { config, port, index, slots },
      resourceLimits: { maxYoungGenerationSizeMb: HTTP_THREAD_YOUNG_GEN_MB },
    });
    const onMessage = (message: ThreadMessage): void => {
      if (message.type === 'listening') {
        worker.off('message', onMessage);
        resolve({ worker, boundPort: message.port });
      } else if (message.type === 'failed') {
        reject(new Error(message.message));
      }
    };
    worker.on('message', onMessage);
    worker.once('error', (err) => {
      log.error({ err, thread: index }, 'thread.failed');
      reject(err);
    });
  });
}

/**
 * Asks a thread to stop gracefully and resolves when it has ended by itself, with whether all of
 * its in-flight work finished. Never `terminate()`: tearing down a thread's event loop while uWS
 * still has sockets on it aborts the whole process.
 */
function stopThread(worker: Worker): Promise<boolean> {
  return new Promise((resolve) => {
    let finished = false;
    worker.on('message', (message: ThreadMessage) => {
      if (message.type === 'stopped') finished = message.finished;
    });
    worker.once('exit', () => resolve(finished));
    worker.postMessage({ type: 'stop' });
  });
}

/** Stops a start that cannot go on, saying why on standard error. */
function refuse(err: unknown): never {
  process.stderr.write(`plinth: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

const delay = (ms: number): Promise<undefined> => new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());

function findFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** For the person at the terminal, on stderr: stdout carries JSON lines only. */
function printBanner(config: Readonly<Config>, port: number, opsPort: number | undefined): void {
  const local = (host: string): string => `http://${host}:${port}`;
  const ops = `http://${config.ops.host.includes(':') ? `[${config.ops.host}]` : config.ops.host}:${opsPort}`;
  process.stderr.write(
    [
      `Plinth is running on port ${port} (${config.threads} HTTP thread${config.threads === 1 ? '' : 's'}).`,
      `  API        ${local(config.hosts.api)}/v1`,
      `  Sites      ${local(`<name>.${config.hosts.siteDomain}`)}`,
      `  App        ${local(config.hosts.app)}`,
      `  MCP        ${local(config.hosts.mcp)}`,
      `  Docs       ${local(config.hosts.docs)}`,
      ...(opsPort === undefined ? [] : [`  Operator   ${ops}/healthz, /readyz, /metrics, TLS ask at /?domain=<name>`]),
      `  Public site address form: ${siteUrl(config.publicUrls, '<name>')}`,
      `  Data       ${config.dataDir}`,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`plinth: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
