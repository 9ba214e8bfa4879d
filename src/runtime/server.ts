import { randomBytes } from 'node:crypto';
import { createApi, openApiDocument, type ApiRoute } from '../api/index.js';
import { createApp } from '../app/index.js';
import { domainUrl, siteUrl, type Config } from '../config.js';
import { gateCommits, settlesWithin, waitForEmpty } from './drain.js';
import { createMcp } from '../mcp/index.js';
import { createDocs } from '../docs/index.js';
import { ServiceError } from '../errors.js';
import {
  type BodyMemoryStats,
  closeApp,
  createBodyMemory,
  createResponseMeter,
  createUploadPacer,
  HEADER_NAMES,
  holdIfUnfinished,
  type HttpRequest,
  type HttpResponse,
  loadNativeUws,
  silenceServerMark,
  sendError,
  type us_listen_socket,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { createIngestPool } from '../ingest/index.js';
import { ACCESS_SECRET_NAME, type ProcessSlots } from '../rules/index.js';
import {
  createAccessGate,
  createDomainServing,
  createHostRouter,
  createSiteServer,
  createVisitCounter,
  startAnalyticsFlush,
  type SiteCacheStats,
} from '../serve/index.js';
import {
  createClientMetadataFetcher,
  createMailer,
  createTxtLookup,
  createWebhookTransport,
  type ClientMetadataFetcher,
  type WebhookTransport,
} from '../outbound/index.js';
import { createFollowUps, createOperations, startWebhookDeliverer } from '../sites/index.js';
import { bucketOptionsOf, connectStore, REPLICA_POLL_MS, type Store } from '../store/index.js';
import { createAccessLog, readAccessDetail, type AccessDetail } from './access-log.js';
import { meterDeploys } from './metered-deploys.js';
import type { MetricFamily } from './metric-families.js';
import { createThreadMetrics, HOST_KIND_INDEX } from './thread-metrics.js';

/**
 * One HTTP thread's composition: its own store handle, its own uWS app, the Host router in front.
 * `main.ts` runs one of these per thread; tests run one in-process on an ephemeral port.
 */
export interface RunningServer {
  readonly port: number;
  readonly store: Store;
  /**
   * Graceful stop: stops accepting connections and refuses new deploys, waits up to `graceMs`
   * (default: the configured stop grace) for the responses still owed, then makes sure nothing
   * unfinished publishes, closes every connection, the ingest pool and this thread's store handle.
   * Resolves true when everything in flight finished, false when the bound cut something off.
   */
  close(options?: { graceMs?: number; hurry?: AbortSignal }): Promise<boolean>;
  /** Counters of this thread, for tests and benchmarks. */
  stats(): ServerStats;
  /** Writes the analytics this thread counted so far now, rather than at its next flush (tests). */
  flushAnalytics(): Promise<void>;
  /** Resolves once the work answers left running (a deploy's compressed variants, its blob journal) has settled (tests). */
  followUpsSettled(): Promise<void>;
  /** This thread's metric families for `/metrics` (none with `PLINTH_METRICS=0`). */
  metrics(): MetricFamily[];
  /** Why this thread cannot serve (its store handle fails a read), or undefined when it can. */
  problem(): string | undefined;
}

export interface ServerStats {
  /** Deploys handed to the ingest pool so far. */
  ingestTasks: number;
  /** Responses still owed after their handler returned (uploads, deploys, API calls, streamed files). */
  unanswered: number;
  cache: SiteCacheStats;
  /** Deploy bodies received into memory or spooled (see http/body-memory.ts). */
  uploads: BodyMemoryStats;
}

export interface StartServerOptions {
  config: Readonly<Config>;
  log: Logger;
  /** Overrides the listening port (e.g. the port the first thread got for port 0). */
  port?: number;
  now?: () => number;
  /** Built ingest worker to run (tests point at dist/, since vitest runs src/ directly). */
  ingestWorkerFile?: string | URL;
  /** Fetches OAuth client metadata documents (tests trust a local https server with it). */
  fetchClientMetadata?: ClientMetadataFetcher;
  /**
   * In a cluster, keep this thread's replica current itself. `plinth start` leaves that to its
   * main thread; a server started alone in a process (tests) sets it.
   */
  followCluster?: boolean;
  /** Names this thread in the cluster's change log. */
  index?: number;
  /** Counters of the process's work on libuv's pool (password hashes, name lookups), shared by its HTTP threads; a thread of its own without. */
  slots?: ProcessSlots;
  /** Where `PLINTH_ACCESS_LOG=1` writes its lines (default: `log`, at its level). */
  accessLog?: Logger;
  /** The REST routes this thread serves and documents (default `API_ROUTES`; a test adds one). */
  apiRoutes?: readonly ApiRoute[];
  /** Sends webhook deliveries (tests trust a local https receiver with it). */
  webhookTransport?: WebhookTransport;
}

/** Bytes of a webhook receiver's answer read at most: only its status matters. */
const WEBHOOK_RESPONSE_BYTES = 64 * 1024;
/**
 * Distinct page-view entries (path, referrer, client, user agent) one thread holds between
 * flushes; reaching it flushes at once, so a flood of distinct visitors costs bounded memory.
 */
const ANALYTICS_BATCH_ENTRIES = 50_000;

/** An ingest thread beyond PLINTH_INGEST_IDLE_THREADS ends after this long without a task. */
const INGEST_IDLE_TIMEOUT_MS = 30_000;

/** How long a stop waits for follow-up work once the ingest pool has stopped (a bucket upload, say). */
const FOLLOW_UP_CUTOFF_MS = 10_000;

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config, log } = options;
  const uws = loadNativeUws({ fallbackRequested: config.uwsFallbackRequested });
  silenceServerMark(uws);
  // The main thread built the replica already; a server started alone builds it here.
  const store = await connectStore({
    dir: config.dataDir,
    now: options.now,
    bucket: bucketOptionsOf(config),
    ...(config.databaseUrl
      ? { databaseUrl: config.databaseUrl, bootstrap: true, startWithoutDatabase: true, origin: `${process.pid}/${options.index ?? 0}` }
      : {}),
  });
  // In a cluster, time as PostgreSQL tells it (store.now); `options.now` is this node's own clock.
  const now = store.now;
  const stopFollowing = options.followCluster && store.cluster ? await store.cluster.follow(REPLICA_POLL_MS) : undefined;
  // Large bodies of known size that fit (deploys, drops, MCP calls) are received into memory, not spooled (see body-memory.ts).
  const memory = createBodyMemory({ budgetBytes: config.deploy.memoryBodyBytes, maxBodyBytes: config.deploy.memoryBodyMaxBytes });
  const ingest = createIngestPool({
    maxThreads: config.deploy.ingestThreads,
    maxQueue: config.deploy.ingestQueue,
    minThreads: config.deploy.ingestIdleThreads,
    idleTimeoutMs: INGEST_IDLE_TIMEOUT_MS,
    workerFile: options.ingestWorkerFile,
    bodies: memory,
  });
  // Blob bytes that commits carried and no settle dropped before a crash (their files were put
  // back when the store opened): written out now, once.
  if (store.journaledBlobs() > 0) log.info({ blobs: await store.settleBlobJournal(() => store.blobs.flush(ingest.runSync)) }, 'blobs.journal_settled');
  const gate = createAccessGate({
    store,
    config: config.serve,
    secret: await store.ensureSecret(ACCESS_SECRET_NAME, () => randomBytes(32).toString('base64url')),
    hostUrl: (label) => (label.includes('.') ? domainUrl(config.publicUrls, label) : siteUrl(config.publicUrls, label)),
    log: log.child({ area: 'serve' }),
    now,
    hashSlots: options.slots?.passwordHashes,
  });
  // Analytics: counted in this thread's memory, written in batches (serve/visits.ts, analytics-flush.ts).
  let flushAnalytics: (() => void) | undefined;
  const visits = config.analytics.enabled
    ? createVisitCounter({
        now,
        readForwarded: config.deploy.trustProxy.kind !== 'none',
        maxEntries: ANALYTICS_BATCH_ENTRIES,
        onFull: () => flushAnalytics?.(),
      })
    : undefined;
  const analytics = visits
    ? startAnalyticsFlush({
        store,
        counter: visits,
        config: config.analytics,
        trustProxy: config.deploy.trustProxy,
        // Its address, and the custom domains it verified (active, or suspended while its TXT
        // record is missing): read once a flush for each site that was visited.
        ownHosts: (siteId, name) => {
          const hosts = new Set([new URL(siteUrl(config.publicUrls, name)).hostname]);
          for (const record of store.listDomains(siteId)) if (record.status === 'active' || record.status === 'suspended') hosts.add(record.domain);
          return hosts;
        },
        now,
        log: log.child({ area: 'analytics' }),
      })
    : undefined;
  flushAnalytics = analytics ? () => void analytics.flush() : undefined;
  // Counting for /metrics and the access log (see http/response-meter.ts); neither costs anything when off.
  const metrics = config.ops.metrics ? createThreadMetrics() : undefined;
  const accessLog = config.ops.accessLog ? createAccessLog(options.accessLog ?? log) : undefined;
  const meter =
    metrics || accessLog
      ? createResponseMeter<AccessDetail | undefined>(
          (kind, status, bytes, ms, aborted, detail) => {
            metrics?.request(kind, status, bytes, ms, aborted);
            if (detail !== undefined) accessLog?.(detail, status, bytes, ms, aborted);
          },
          // The access log prints each answer's time; the metrics' first bucket is 0.5 ms. Without
          // it, the prepared path's answers are two writes into this thread's metrics.
          { timeEveryAnswer: accessLog !== undefined, ...(metrics && !accessLog ? { answered: metrics.answered } : {}) },
        )
      : undefined;
  // Custom domains: hosts that are none of ours, and redirects to a site's primary domain.
  const domains = createDomainServing({ store, hosts: config.hosts, scheme: config.publicUrls.site.startsWith('https:') ? 'https' : 'http', now });
  const sites = createSiteServer({
    store,
    config: config.serve,
    siteUrl: (name) => siteUrl(config.publicUrls, name),
    log: log.child({ area: 'serve' }),
    now,
    buildBadgedPage: (source, badge) => ingest.badgePage({ source, ...badge }),
    gate,
    domains,
    visits,
    // The prepared path counts its own answers (status and size known) without the meter's wrappers.
    ...(meter ? { ends: meter } : {}),
  });
  // Uploads yield to visitors on a busy thread (see upload-pacer.ts).
  const pacer =
    config.deploy.pacedUploadBytesPerSecond > 0
      ? createUploadPacer({ busyRequestsPerSecond: config.deploy.busyRequestsPerSecond, pacedBytesPerSecond: config.deploy.pacedUploadBytesPerSecond })
      : undefined;
  // Once a stop has begun and its grace is over, no deploy or rollback may still go live.
  const commits = gateCommits(store);
  const mailer = createMailer({ config: config.mail, dataDir: config.dataDir, log: log.child({ area: 'mail' }), now });
  const followUps = createFollowUps();
  const webhookTransport =
    options.webhookTransport ??
    createWebhookTransport({
      allowLoopback: config.webhooks.allowLoopback,
      timeoutMs: config.webhooks.timeoutMs,
      maxResponseBytes: WEBHOOK_RESPONSE_BYTES,
      lookupsAtOnce: config.outboundLookupsAtOnce,
      lookupSlots: options.slots?.outboundLookups,
    });
  // The operations commit through the gate.
  const operations = createOperations({
    followUps,
    store: commits.store,
    ingest,
    config,
    log: log.child({ area: 'sites' }),
    now,
    mailer,
    fetchClientMetadata: options.fetchClientMetadata ?? metadataFetcherFor(config, log.child({ area: 'sites' }), options.slots),
    lookupTxt: createTxtLookup(config.domains.dnsServers),
    webhookTransport,
  });
  // One thread per node sends webhook deliveries; in a cluster the queue hands each to one node.
  const deliverer =
    (options.index ?? 0) === 0 ? startWebhookDeliverer({ store, log: log.child({ area: 'webhooks' }), config, now, webhookTransport }) : undefined;
  // One set of operations behind every surface of this thread; its deploys counted by result.
  const ops = metrics ? { ...operations, deploy: meterDeploys(operations.deploy, metrics.deploy) } : operations;
  const api = createApi({ ops, store: commits.store, pacer, memory, config, log: log.child({ area: 'api' }), routes: options.apiRoutes });
  const account = createApp({ ops, config, pacer, memory, log: log.child({ area: 'app' }) });
  const mcp = createMcp({ ops, config, pacer, memory, log: log.child({ area: 'mcp' }) });
  // Responses still owed after their handler returned (uploads, deploys, API calls, streamed files).
  const pending = new Set<HttpResponse>();
  let stopping = false;
  const restarting = new ServiceError('unavailable', 'The server is restarting and takes no new deploys.', {
    agentMessage: 'The server is restarting. Send the same deploy again in a few seconds.',
    headers: { 'Retry-After': '5' },
  });
  const docs = createDocs({ config, log: log.child({ area: 'docs' }), openApi: openApiDocument(config, options.apiRoutes) });

  const unknownHost = new ServiceError('not_found', `Unknown host. Sites live at <name>.${config.hosts.siteDomain}; the API is at ${config.hosts.api}.`);

  const routeHost = createHostRouter(config.hosts);
  const siteKind = HOST_KIND_INDEX.site;
  /** `method`: 'get' from uWS's GET route, which spares the site host asking for it. */
  const dispatch = (res: HttpResponse, req: HttpRequest, method?: 'get'): void => {
    // Read once: uWS makes a fresh string of a header on every call.
    const hostHeader = req.getHeader(HEADER_NAMES.host);
    const route = routeHost(hostHeader);
    // A site's kind without the keyed lookup (it sees every kind, so it is megamorphic).
    const kind = route.kind === 'site' ? siteKind : HOST_KIND_INDEX[route.kind === 'unknown' ? 'other' : route.kind];
    meter?.begin(res, kind, accessLog ? readAccessDetail(res, req, config.deploy.trustProxy) : undefined);
    if (route.kind === 'site') {
      pacer?.noteRequest();
      // A live site's own address may move to its primary domain: the site server asks `domains`.
      sites.handle(res, req, route.name, route.preview, undefined, method);
      return holdIfUnfinished(res, pending);
    }
    const head = req.getMethod() === 'head';
    switch (route.kind) {
      case 'api':
        // A deploy can take long; one arriving during a stop is sent to the next server instead.
        if (stopping && req.getMethod() === 'post' && req.getUrl() === '/v1/deploy') {
          return sendError(res, restarting, log, { closeConnection: true });
        }
        api.handle(res, req);
        return holdIfUnfinished(res, pending);
      case 'mcp':
        mcp.handle(res, req);
        return holdIfUnfinished(res, pending);
      case 'app':
        account.handle(res, req);
        return holdIfUnfinished(res, pending);
      case 'docs':
        return docs.handle(res, req);
      default: {
        const custom = domains.route(hostHeader);
        if (custom?.kind === 'redirect') return domains.redirect(res, req, custom);
        if (custom?.kind === 'site') {
          meter?.retag(res, HOST_KIND_INDEX.domain);
          pacer?.noteRequest();
          sites.handle(res, req, custom.name, undefined, custom.domain);
          return holdIfUnfinished(res, pending);
        }
        return sendError(res, unknownHost, log, { head });
      }
    }
  };
  // GET has a route of its own (uWS prefers it to `any`), so the method is known without asking
  // uWS for it: a native call and a string per request on the hot path.
  const app = uws
    .App()
    .get(
      '/*',
      meter
        ? (res, req) => {
            dispatch(res, req, 'get');
            meter.handled(res);
          }
        : (res, req) => dispatch(res, req, 'get'),
    )
    .any(
      '/*',
      meter
        ? (res, req) => {
            dispatch(res, req);
            meter.handled(res);
          }
        : dispatch,
    );

  const port = options.port ?? config.port;
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.listenHost, port, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`Could not listen on ${config.listenHost}:${port} (is the port in use?)`));
    });
  });

  let closing: Promise<boolean> | undefined;
  const close = async (graceMs: number, hurry?: AbortSignal): Promise<boolean> => {
    stopping = true;
    const deadline = performance.now() + graceMs;
    uws.us_listen_socket_close(listenSocket);
    const finished = await waitForEmpty(pending, graceMs, hurry);
    if (!finished) log.warn({ unfinished: pending.size, graceMs }, 'server.grace_expired');
    await commits.seal();
    // Answers of commits that just finished are written on the next turn; let them out.
    await new Promise((resolve) => setImmediate(resolve));
    // Every connection still open (idle keep-alive ones, and whatever the grace cut off); no uWS
    // handle may outlive this, or the thread's event loop cannot close.
    closeApp(app);
    pacer?.stop();
    await mcp.close();
    mailer.close();
    // What this thread counted since its last flush, written before the store closes.
    await analytics?.stop();
    // Follow-up work (compressing a published deploy) gets what is left of the grace; past it, the
    // pool is stopped, which fails that work, and the store closes only once none of it still runs.
    const left = (): number => (finished && !hurry?.aborted ? deadline - performance.now() : 0);
    await settlesWithin(followUps.settled(), left());
    if (!(await settlesWithin(ingest.close(), left()))) await ingest.close({ force: true });
    if (!(await settlesWithin(followUps.settled(), FOLLOW_UP_CUTOFF_MS))) log.warn({ unfinished: followUps.size }, 'server.follow_ups_unfinished');
    await deliverer?.stop();
    await stopFollowing?.();
    await store.close();
    return finished;
  };
  return {
    port: uws.us_socket_local_port(listenSocket as never),
    store,
    close(closeOptions = {}) {
      closing ??= close(closeOptions.graceMs ?? config.stopGraceMs, closeOptions.hurry);
      return closing;
    },
    flushAnalytics: () => analytics?.flush() ?? Promise.resolve(),
    followUpsSettled: () => followUps.settled(),
    stats: () => ({ ingestTasks: ingest.unpacksStarted, unanswered: pending.size, cache: sites.cacheStats(), uploads: memory.stats() }),
    metrics: () =>
      metrics?.families({
        cache: sites.cacheStats(),
        ingest: { queued: ingest.queueSize, inFlight: ingest.inFlight, capacity: ingest.capacity },
        store: store.counters(),
      }) ?? [],
    problem() {
      if (closing) return 'this HTTP thread is stopping';
      try {
        // A read any open store answers; a closed or broken LMDB environment throws.
        store.isNameUsed('plinth-readiness-probe');
        return undefined;
      } catch (err) {
        return `the store cannot be read: ${err instanceof Error ? err.message : String(err)}`;
      }
    },
  };
}

/** The fenced client-metadata fetcher; loopback addresses pass only when the server itself runs on localhost. */
function metadataFetcherFor(config: Readonly<Config>, log: Logger, slots: ProcessSlots | undefined): ClientMetadataFetcher {
  const appHost = new URL(config.publicUrls.app).hostname;
  return createClientMetadataFetcher({
    allowLoopback: appHost === 'localhost' || appHost.endsWith('.localhost') || appHost === '127.0.0.1',
    log,
    lookupsAtOnce: config.outboundLookupsAtOnce,
    lookupSlots: slots?.outboundLookups,
  });
}
