// Where the chaos run's nodes run: one process on its data directory (records in its LMDB, blobs
// in its folder), or the nodes of a cluster on one PostgreSQL and one bucket (each LMDB a replica,
// each blob folder a cache). The harness drives both the same way and checks both the same way.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { compressFastAsync } from '../../src/store/blob-store.js';
import { VARIANTS_AFTER_ANSWER_MAX_BYTES } from '../../src/store/bucket-blob-store.js';
import { hashToken, openStore, type Encoding, type Store } from '../../src/store/index.js';
import type { TestCluster } from '../helpers/cluster.js';
import { MAIN, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { exchange } from './exchange.js';

/** Settings of every chaos node: sweeps every second (so kills land in them), debug logs to see them start. */
export const CHAOS_SETTINGS: Readonly<Record<string, string>> = {
  PLINTH_THREADS: '2',
  PLINTH_INGEST_THREADS: '1',
  PLINTH_LOG_LEVEL: 'debug',
  PLINTH_SWEEP_INTERVAL_S: '1',
  PLINTH_BLOB_GRACE_S: '60',
  PLINTH_SITES_LIMIT_BUILDER: '100000',
};

export interface ChaosNodes {
  readonly size: number;
  /** Where blobs are kept for good: the node's own folder, or the cluster's bucket. */
  readonly blobHome: 'folder' | 'bucket';
  dataDir(index: number): string;
  /** The node as it runs now (undefined: not started yet, or killed). */
  running(index: number): MainProcess | undefined;
  /** Starts node `index` on its own data directory, the first time or again after a kill. */
  start(index: number): Promise<MainProcess>;
  /** Starts node `index` and kills it with SIGKILL `afterMs` later, whatever it is doing by then. */
  startAndKill(index: number, afterMs: number): Promise<{ listened: boolean }>;
  /** The API token of a new Builder account; every running node knows it once this resolves. */
  makeAccount(): Promise<string>;
  /**
   * Runs `check` on the records as they stand now, with the blobs where they are kept for good.
   * The one-node store is opened in the data directory, so its node must be down.
   */
  withRecords<T>(check: (records: Store, blobs: BlobShelf) => Promise<T>): Promise<T>;
}

/** Blobs (and their variants) where they are kept for good. */
export interface BlobShelf {
  /** The size kept, or undefined when there is none. */
  size(sha256: string, encoding?: Encoding): Promise<number | undefined>;
  read(sha256: string, encoding?: Encoding): Promise<Buffer>;
  /** In a cluster, the bytes at a packed place a file record names (`FileEntry.pack`); undefined when that pack is gone. */
  readPacked?(pack: string, offset: number, size: number): Promise<Buffer | undefined>;
}

/** One process on `dataDir`, as `npm run chaos` runs it. */
export function oneNode(dataDir: string): ChaosNodes {
  const env = mainEnv(dataDir, { ...CHAOS_SETTINGS });
  let main: MainProcess | undefined;
  const alive = (): MainProcess | undefined => (main && main.child.exitCode === null && main.child.signalCode === null ? main : undefined);
  return {
    size: 1,
    blobHome: 'folder',
    dataDir: () => dataDir,
    running: alive,
    async start() {
      main = await startMain(env);
      return main;
    },
    startAndKill: (_index, afterMs) => startAndKill(env, afterMs),
    async makeAccount() {
      if (alive()) throw new Error('the account is made in the data directory before the server starts');
      const store = openStore({ dir: dataDir });
      try {
        return await addAccount(store);
      } finally {
        await store.close();
      }
    },
    async withRecords(check) {
      if (alive()) throw new Error('the one-node store is checked with its server down');
      const store = openStore({ dir: dataDir });
      const blobs: BlobShelf = {
        size: async (sha256, encoding) => {
          const path = store.blobs.pathOf(sha256, encoding);
          return existsSync(path) ? statSync(path).size : undefined;
        },
        read: async (sha256, encoding) => readFileSync(store.blobs.pathOf(sha256, encoding)),
      };
      try {
        return await check(store, blobs);
      } finally {
        await store.close();
      }
    },
  };
}

/**
 * The nodes of a cluster started with `CHAOS_SETTINGS` (see test/helpers/cluster.ts). Records are
 * checked on the operator's replica, caught up with PostgreSQL first; blobs in the bucket.
 */
export function clusterNodes(cluster: TestCluster): ChaosNodes {
  const operator = cluster.operator;
  const bucket = operator.blobs.bucket;
  if (!bucket || !operator.cluster) throw new Error('the cluster needs records in PostgreSQL and blobs in a bucket');
  return {
    size: cluster.size,
    blobHome: 'bucket',
    dataDir: (index) => cluster.dataDir(index),
    running: (index) => {
      const main = cluster.process(index);
      return main && main.child.exitCode === null && main.child.signalCode === null ? main : undefined;
    },
    start: (index) => cluster.start(index),
    startAndKill: (index, afterMs) => startAndKill(cluster.env(index), afterMs),
    async makeAccount() {
      const token = await addAccount(operator);
      // Every node learns of it from the change log: wait until each one accepts it.
      for (let index = 0; index < cluster.size; index++) {
        const port = cluster.process(index)?.port;
        if (port === undefined) continue;
        const deadline = performance.now() + 10_000;
        for (;;) {
          const answer = await exchange({ port, host: 'api.localhost', path: '/v1/me', headers: { authorization: `Bearer ${token}` } }).outcome;
          if ('status' in answer && answer.status === 200) break;
          if (performance.now() > deadline) throw new Error(`node ${index} never learned of the chaos account`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      return token;
    },
    async withRecords(check) {
      // The listing first, then the records: whatever the records reference was put in the bucket
      // before its commit, so it is listed, unless it arrived after the listing (a compressed
      // variant recorded meanwhile), which is asked for by name.
      const listed = new Map<string, number>();
      for await (const object of bucket.list()) listed.set(object.key, object.size);
      await operator.cluster!.catchUp();
      // Packs read whole, once each: a check reads many ranges of few packs.
      const packBodies = new Map<string, Promise<Buffer | undefined>>();
      const packBody = (pack: string): Promise<Buffer | undefined> => {
        let body = packBodies.get(pack);
        if (body === undefined) packBodies.set(pack, (body = cluster.s3.get(pack).catch(() => undefined)));
        return body;
      };
      const readPacked = async (pack: string, offset: number, size: number): Promise<Buffer | undefined> =>
        (await packBody(pack))?.subarray(offset, offset + size);
      /** An object kept alone, or else its range of a pack as its row says (a row must never point at a missing pack). */
      const kept = async (key: string): Promise<Buffer | undefined> => {
        if (listed.has(key) || (await bucket.head(key)) !== undefined) return cluster.s3.get(key);
        const row = (await operator.blobs.packs?.find([key]))?.get(key);
        if (row === undefined) return undefined;
        const bytes = await readPacked(row.pack, row.offset, row.size);
        if (bytes === undefined || bytes.byteLength !== row.size)
          throw new Error(`the row of ${key} points at ${row.pack}, which the bucket does not hold whole`);
        return bytes;
      };
      const blobs: BlobShelf = {
        async size(sha256, encoding) {
          const key = bucketKey(sha256, encoding);
          const size = listed.get(key) ?? (await kept(key))?.byteLength;
          if (size !== undefined || encoding === undefined) return size;
          // A small blob's variants go up after the deploy's answer, so a node killed right after
          // its 201 leaves them out; any node asked for one makes it from the blob with the
          // deploy's settings (src/store/bucket-blob-store.ts). What it makes must be what was recorded.
          const blob = await kept(bucketKey(sha256));
          if (blob === undefined || blob.byteLength > VARIANTS_AFTER_ANSWER_MAX_BYTES) return undefined;
          return (await compressFastAsync(blob, encoding)).byteLength;
        },
        async read(sha256, encoding) {
          const bytes = await kept(bucketKey(sha256, encoding));
          if (bytes === undefined) throw new Error(`the bucket holds no ${bucketKey(sha256, encoding)}`);
          return bytes;
        },
        readPacked,
      };
      return check(operator, blobs);
    },
  };
}

/** The bucket's layout (docs/operating.md "Blobs in an S3-compatible bucket"). */
function bucketKey(sha256: string, encoding?: Encoding): string {
  const suffix = encoding === undefined ? '' : encoding === 'br' ? '.br' : '.gz';
  return `blobs/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}${suffix}`;
}

/** A Builder account and its API token, made as the admin CLI makes them. */
async function addAccount(store: Store): Promise<string> {
  const account = await store.createAccount({ email: `chaos-${randomBytes(4).toString('hex')}@example.com`, plan: 'builder' });
  const token = `pl_${randomBytes(24).toString('base64url')}`;
  await store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'chaos' });
  return token;
}

/** `node dist/main.js`, killed `afterMs` after it was spawned: in start-up, or just after. */
async function startAndKill(env: Record<string, string>, afterMs: number): Promise<{ listened: boolean }> {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await Promise.race([new Promise((resolve) => setTimeout(resolve, afterMs)), exited]);
  if (child.exitCode !== null) throw new Error(`the node exited with ${child.exitCode} during its start:\n${out}`);
  child.kill('SIGKILL');
  await exited;
  return { listened: /running on port \d+/.test(out) };
}
