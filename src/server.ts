import { createApi } from './api/index.js';
import { siteUrl, type Config } from './config.js';
import { createDocs } from './docs/index.js';
import { ServiceError } from './errors.js';
import { sendError } from './http.js';
import type { Logger } from './log.js';
import { createIngestPool } from './ingest/index.js';
import { createSiteServer, routeHost } from './serve/index.js';
import { openStore, type Store } from './store/index.js';
import { createUploadPacer } from './upload-pacer.js';
import { loadNativeUws, type us_listen_socket } from './uws.js';

/**
 * One HTTP thread's composition: its own store handle, its own uWS app, the Host router in front.
 * `main.ts` runs one of these per thread; tests run one in-process on an ephemeral port.
 */
export interface RunningServer {
  readonly port: number;
  readonly store: Store;
  /** Stops accepting connections, then closes this thread's store handle. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  config: Readonly<Config>;
  log: Logger;
  /** Overrides the listening port (e.g. the port the first thread got for port 0). */
  port?: number;
  now?: () => number;
  /** Built ingest worker to run (tests point at dist/, since vitest runs src/ directly). */
  ingestWorkerFile?: string | URL;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config, log } = options;
  const uws = loadNativeUws();
  const store = await openStore({ dir: config.dataDir, now: options.now });
  const sites = createSiteServer({
    store,
    config: config.serve,
    siteUrl: (name) => siteUrl(config.publicUrls, name),
    log: log.child({ area: 'serve' }),
    now: options.now,
  });

  const ingest = createIngestPool({
    maxThreads: config.deploy.ingestThreads,
    maxQueue: config.deploy.ingestQueue,
    idleTimeoutMs: 30_000,
    workerFile: options.ingestWorkerFile,
  });
  // Uploads yield to visitors on a busy thread (see upload-pacer.ts).
  const pacer = config.deploy.pacedUploadBytesPerSecond > 0
    ? createUploadPacer({ busyRequestsPerSecond: config.deploy.busyRequestsPerSecond, pacedBytesPerSecond: config.deploy.pacedUploadBytesPerSecond })
    : undefined;
  const api = createApi({ store, ingest, pacer, config, log: log.child({ area: 'api' }), now: options.now });
  const docs = createDocs({ config, log: log.child({ area: 'docs' }) });

  const notBuilt = (surface: string): ServiceError =>
    new ServiceError('not_found', `The ${surface} is not available on this server yet.`);

  const unknownHost = new ServiceError(
    'not_found',
    `Unknown host. Sites live at <name>.${config.hosts.siteDomain}; the API is at ${config.hosts.api}.`,
  );

  const app = uws.App().any('/*', (res, req) => {
    const route = routeHost(req.getHeader('host'), config.hosts);
    if (route.kind === 'site') {
      pacer?.noteRequest();
      return sites.handle(res, req, route.name);
    }
    const head = req.getMethod() === 'head';
    switch (route.kind) {
      case 'api':
        return api.handle(res, req);
      case 'mcp':
        return sendError(res, notBuilt('MCP server'), log, { head });
      case 'app':
        return sendError(res, notBuilt('account app'), log, { head });
      case 'docs':
        return docs.handle(res, req);
      default:
        return sendError(res, unknownHost, log, { head });
    }
  });

  const port = options.port ?? config.port;
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.listenHost, port, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`Could not listen on ${config.listenHost}:${port} (is the port in use?)`));
    });
  });

  let closed = false;
  return {
    port: uws.us_socket_local_port(listenSocket as never),
    store,
    async close() {
      if (closed) return;
      closed = true;
      uws.us_listen_socket_close(listenSocket);
      pacer?.stop();
      await ingest.close();
      await store.close();
    },
  };
}
