import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer, type StartServerOptions } from '../../src/runtime/server.js';
import { serverDataDir } from './sites.js';

/** The built ingest worker: vitest runs src/ directly, but worker threads need JavaScript. */
export const INGEST_WORKER = fileURLToPath(new URL('../../dist/ingest/worker-entry.cjs', import.meta.url));

export interface TestServer extends RunningServer {
  config: Readonly<Config>;
  dataDir: string;
}

/**
 * A real server on an ephemeral loopback port with a fresh data directory, or the one `env`
 * names in PLINTH_DATA_DIR (to start again on what an earlier server left).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  now?: () => number,
  extra: Pick<StartServerOptions, 'fetchClientMetadata' | 'apiRoutes' | 'webhookTransport'> = {},
): Promise<TestServer> {
  const dataDir = env.PLINTH_DATA_DIR ?? serverDataDir();
  const config = loadConfig({
    PLINTH_PORT: '0',
    PLINTH_THREADS: '1',
    PLINTH_DATA_DIR: dataDir,
    PLINTH_LISTEN_HOST: '127.0.0.1',
    PLINTH_LOG_LEVEL: 'silent',
    PLINTH_ANON_SITES_PER_HOUR: '0',
    PLINTH_ANON_DEPLOYS_PER_HOUR: '0',
    PLINTH_INGEST_THREADS: '1',
    // Most test servers take few deploys or none: their ingest thread starts with the first.
    PLINTH_INGEST_IDLE_THREADS: '0',
    // A refused body whose client holds the rest is answered after 200 ms without a byte rather
    // than a second: a dozen tests wait for such answers, none for the pause itself.
    PLINTH_LINGER_IDLE_MS: '200',
    ...env,
  });
  const server = await startServer({ config, log: createLogger({ level: 'silent' }), now, ingestWorkerFile: INGEST_WORKER, ...extra });
  return Object.assign(server, { config, dataDir });
}
