import { connectStore, type AccountRecord, type Store } from '../../src/store/index.js';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { deployFiles, type DeployAnswer, type DeployFiles, type DeployOptions } from './deploy-client.js';
import { callApi } from './http.js';
import { killMain, mainEnv, startMain, type MainProcess } from './main-process.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import { startS3, type TestS3 } from './s3.js';
import { tempDir } from './sites.js';
import { waitUntil } from './wait.js';

/**
 * A cluster for a test file: a private PostgreSQL, a private bucket (s3rver) and `count` Plinth
 * processes (`node dist/main.js`), each with its own data directory, on loopback. Nodes can be
 * killed and started again on the same data directory (on a new port); an operator store, as
 * `plinth admin` opens one, makes accounts and tokens without going through a node.
 */
export interface TestCluster {
  pg: TestPostgres;
  s3: TestS3;
  /** Records and blobs as `plinth admin` sees them, from its own replica. */
  operator: Store;
  readonly size: number;
  port(index: number): number;
  dataDir(index: number): string;
  process(index: number): MainProcess | undefined;
  /** The settings node `index` runs with (add overrides with `extra`). */
  env(index: number, extra?: Record<string, string>): Record<string, string>;
  start(index: number, extra?: Record<string, string>): Promise<MainProcess>;
  /** A JSON deploy of `files` through node `index`. */
  deploy(index: number, files: DeployFiles, options?: DeployOptions): Promise<DeployAnswer>;
  kill(index: number, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  count?: number;
  /** Settings every node gets (beside the test defaults of `mainEnv`). */
  env?: Record<string, string>;
  /** Settings of one node (its own address and ports, say), over `env`. */
  nodeEnv?: (index: number) => Record<string, string>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const count = options.count ?? 3;
  const pg = await startPostgres();
  const s3 = await startS3('plinth-cluster');
  const dirs = Array.from({ length: count }, (_, i) => tempDir(`plinth-node-${i}-`));
  const processes: Array<MainProcess | undefined> = Array.from({ length: count }, () => undefined);
  const env = (index: number, extra: Record<string, string> = {}) =>
    mainEnv(dirs[index]!, { PLINTH_DATABASE_URL: pg.url, ...s3.env, ...options.env, ...options.nodeEnv?.(index), ...extra });
  const cluster: TestCluster = {
    pg,
    s3,
    operator: undefined as unknown as Store,
    size: count,
    port(index) {
      const main = processes[index];
      if (!main) throw new Error(`node ${index} is not running`);
      return main.port;
    },
    dataDir: (index) => dirs[index]!,
    process: (index) => processes[index],
    env,
    async start(index, extra) {
      const main = await startMain(env(index, extra), { timeoutMs: 60_000 });
      processes[index] = main;
      return main;
    },
    deploy: (index, files, options) => deployFiles(cluster.port(index), files, options),
    async kill(index, signal = 'SIGKILL') {
      await killMain(processes[index], signal);
      processes[index] = undefined;
    },
    async stop() {
      for (let i = 0; i < count; i++) await killMain(processes[i]);
      await cluster.operator?.close().catch(() => undefined);
      await pg.stop();
      await s3.stop();
    },
  };
  try {
    // One at a time: the first builds the schema, the others bootstrap their replicas from it.
    for (let i = 0; i < count; i++) await cluster.start(i);
    cluster.operator = await connectStore({ dir: tempDir('plinth-operator-'), databaseUrl: pg.url, bootstrap: true, bucket: s3.options() });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/**
 * An account with an API token, made through the operator's store, once every node has it: a
 * node learns records from PostgreSQL a moment after another writes them.
 */
export async function accountOnEveryNode(cluster: TestCluster, plan: AccountRecord['plan'] = 'builder'): Promise<TestAccount> {
  const account = await accountWithToken(cluster.operator, plan);
  for (let node = 0; node < cluster.size; node++) {
    const known = await waitUntil(async () => (await callApi(cluster.port(node), { path: '/v1/me', token: account.token })).status === 200, 5000, 20);
    if (!known) throw new Error(`node ${node} does not know the new account's token after 5 s`);
  }
  return account;
}
