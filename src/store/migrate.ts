import { openBlobJournal, replayJournal } from './blob-journal.js';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database, Key } from 'lmdb';
import { createBucketBlobStore } from './bucket-blob-store.js';
import { forEachLimit } from './bucket.js';
import { openMetadataDbs, type MetadataDbs } from './metadata-dbs.js';
import { claimBucketForMove, INSTALL_ID_SECRET } from './bucket-owner.js';
import { openRecordsLog, type RecordsLog } from './records-log.js';
import { clusterOf } from './replica.js';
import { REPLICATED_DBS, type RecordWrite, type ReplicatedDb } from './replicated-dbs.js';
import { ENCODINGS } from '../rules/index.js';
import type { BucketOptions, BucketOwner } from './types.js';

/**
 * Moving an embedded install into a cluster. The blobs its revisions reference go into the bucket
 * first, each read back and checked against its sha256 (a variant by what it decodes to); then
 * the records of its LMDB go into an empty PostgreSQL in one transaction, which commits only if
 * what PostgreSQL then holds has the same count and digest, database by database, as the source.
 * So the cluster never holds a record whose blob is missing, and a failed run changes no record.
 */

/** Per database: how many records, and a digest of them that does not depend on their order. */
export type RecordsDigest = Record<ReplicatedDb, { records: number; digest: string }>;

export interface RecordsCopyReport {
  records: number;
  changes: number;
  /** The digest both sides agreed on. */
  digest: RecordsDigest;
}

const BATCH = 1000;
/** Blobs read back from the bucket at once. */
const VERIFY_CONCURRENCY = 8;
const MOD = 1n << 256n;

export interface BlobsCopyReport {
  /** Blobs the revisions reference, each now in the bucket and read back whole. */
  blobs: number;
  /** Their brotli and gzip variants on this disk, likewise. */
  variants: number;
  /** Bytes of blobs and variants read back from the bucket and checked. */
  bytesVerified: number;
}

export interface ClusterMoveReport {
  blobs?: BlobsCopyReport;
  records?: RecordsCopyReport;
}

/**
 * Moves the stopped embedded install at `dataDir` into a cluster: its blobs into `bucket` (if
 * given), then its records into the empty PostgreSQL at `databaseUrl` (if given).
 */
export async function moveToCluster(dataDir: string, target: { databaseUrl?: string; bucket?: BucketOptions }): Promise<ClusterMoveReport> {
  const dbs = openSource(dataDir);
  try {
    const log = target.databaseUrl ? await openRecordsLog({ url: target.databaseUrl, origin: `${process.pid}/migrate`, maxConnections: 1 }) : undefined;
    try {
      const report: ClusterMoveReport = {};
      if (target.bucket) {
        // The bucket becomes the cluster's (or, blobs alone, this install's) before a blob goes
        // in: another installation's bucket is refused with nothing copied.
        const installId = dbs.secrets.get(INSTALL_ID_SECRET);
        const source: BucketOwner | undefined = installId === undefined ? undefined : { kind: 'install', id: installId };
        const owner: BucketOwner = log ? { kind: 'cluster', id: log.clusterId } : (source ?? { kind: 'install', id: await newInstallId(dbs) });
        await claimBucketForMove(target.bucket, owner, source);
        report.blobs = await copyBlobs(dbs, dataDir, target.bucket);
      }
      if (log) report.records = await copyRecords(dbs, log);
      return report;
    } finally {
      await log?.close();
    }
  } finally {
    await dbs.env.close();
  }
}

/** Gives the embedded install the id it is known by as a bucket's owner (see bucket-owner.ts `ownerOf`). */
async function newInstallId(dbs: MetadataDbs): Promise<string> {
  const id = randomUUID();
  await dbs.secrets.put(INSTALL_ID_SECRET, id);
  return id;
}

/** The LMDB of a stopped embedded install: refused if it is a cluster's or a process has it open. */
function openSource(dataDir: string): MetadataDbs {
  const metaPath = join(dataDir, 'meta');
  if (!existsSync(join(metaPath, 'data.mdb'))) throw new Error(`${dataDir} holds no Plinth data directory (no meta/data.mdb).`);
  const dbs = openMetadataDbs(metaPath);
  try {
    if (clusterOf(dbs) !== undefined) {
      throw new Error(`${dataDir} belongs to a cluster already (a node's replica, or an install moved before): its records live in PostgreSQL.`);
    }
    const holders = otherProcesses(dbs);
    if (holders.length > 0) throw new Error(`Stop the server first: process ${holders.join(', ')} has ${dataDir} open.`);
    return dbs;
  } catch (err) {
    void dbs.env.close();
    throw err;
  }
}

/**
 * Every blob a revision references, and its variants on this disk, into the bucket (what the
 * bucket already holds is not sent again); then each is downloaded into a scratch folder, which
 * checks its hash, and the scratch folder is removed.
 */
async function copyBlobs(dbs: MetadataDbs, dataDir: string, bucket: BucketOptions): Promise<BlobsCopyReport> {
  const referenced = new Set<string>();
  for (const { value } of dbs.paths.getRange()) referenced.add(value.sha256);
  const source = createBucketBlobStore({ dir: join(dataDir, 'blobs'), now: Date.now, bucket });
  // Files of small deploys that a stop or crash left in the blob journal only (blob-journal.ts).
  replayJournal(openBlobJournal(dbs.env), source, join(dataDir, 'blobs', 'tmp'));
  const missing = [...referenced].filter((sha256) => !existsSync(source.pathOf(sha256)));
  if (missing.length > 0) throw new Error(`${missing.length} referenced blob(s) are missing from ${join(dataDir, 'blobs')}, e.g. ${missing[0]}.`);
  await source.publish(referenced);

  const scratchDir = await mkdtemp(join(tmpdir(), 'plinth-migrate-'));
  const scratch = createBucketBlobStore({ dir: scratchDir, now: Date.now, bucket });
  const report: BlobsCopyReport = { blobs: 0, variants: 0, bytesVerified: 0 };
  try {
    await forEachLimit(referenced, VERIFY_CONCURRENCY, async (sha256) => {
      for (const encoding of [undefined, ...ENCODINGS]) {
        if (encoding !== undefined && !existsSync(source.pathOf(sha256, encoding))) continue;
        await scratch.fetch(sha256, encoding);
        const path = scratch.pathOf(sha256, encoding);
        report.bytesVerified += (await stat(path)).size;
        await rm(path);
        if (encoding === undefined) report.blobs++;
        else report.variants++;
      }
    });
  } finally {
    await rm(scratchDir, { recursive: true, force: true });
  }
  return report;
}

/** The records into the empty cluster of `log`, verified before PostgreSQL commits. */
async function copyRecords(dbs: MetadataDbs, log: RecordsLog): Promise<RecordsCopyReport> {
  const source = digestOf((each) => eachLocalRecord(dbs, each));
  const { records, changes } = await log.importRecords(localBatches(dbs), async (read) => {
    const copied = await digestOfAsync(read);
    const differing = REPLICATED_DBS.filter((db) => copied[db].records !== source[db].records || copied[db].digest !== source[db].digest);
    if (differing.length > 0) throw new Error(`The copy differs from the source in ${differing.join(', ')}; nothing was committed.`);
  });
  // The data directory now belongs to the cluster: a node may start on it with
  // PLINTH_DATABASE_URL (its replica is rebuilt from the same records), and nothing may
  // write to it as an embedded install any more.
  await dbs.replicaState.put('migratedTo', log.clusterId);
  return { records, changes, digest: source };
}

/** Pids of other processes with reader slots in this LMDB environment (a running server has some). */
function otherProcesses(dbs: MetadataDbs): number[] {
  dbs.env.readerCheck();
  const pids = dbs.env
    .readerList()
    .split('\n')
    .slice(1)
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
  return [...new Set(pids)];
}

function eachLocalRecord(dbs: MetadataDbs, each: (batch: Array<[ReplicatedDb, Key, unknown]>) => void): void {
  for (const db of REPLICATED_DBS) {
    const batch: Array<[ReplicatedDb, Key, unknown]> = [];
    for (const { key, value } of (dbs[db] as unknown as Database<unknown, Key>).getRange()) batch.push([db, key, value]);
    each(batch);
  }
}

async function* localBatches(dbs: MetadataDbs): AsyncIterable<RecordWrite[]> {
  for (const db of REPLICATED_DBS) {
    let batch: RecordWrite[] = [];
    for (const { key, value } of (dbs[db] as unknown as Database<unknown, Key>).getRange()) {
      batch.push([db, key, value]);
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
}

/** The same digest of records read through `read`, however they are ordered or batched. */
function digestOf(read: (each: (batch: Array<[ReplicatedDb, Key, unknown]>) => void) => void): RecordsDigest {
  const sums = emptySums();
  read((batch) => addAll(sums, batch));
  return finish(sums);
}

async function digestOfAsync(read: (each: (batch: Array<[ReplicatedDb, Key, unknown]>) => void) => Promise<void>): Promise<RecordsDigest> {
  const sums = emptySums();
  await read((batch) => addAll(sums, batch));
  return finish(sums);
}

type Sums = Record<ReplicatedDb, { records: number; sum: bigint }>;

const emptySums = (): Sums => Object.fromEntries(REPLICATED_DBS.map((db) => [db, { records: 0, sum: 0n }])) as Sums;

function addAll(sums: Sums, batch: ReadonlyArray<[ReplicatedDb, Key, unknown]>): void {
  for (const [db, key, value] of batch) {
    const hash = createHash('sha256').update(JSON.stringify(key)).update('\u0000').update(canonicalJson(value)).digest('hex');
    sums[db].records++;
    sums[db].sum = (sums[db].sum + BigInt(`0x${hash}`)) % MOD;
  }
}

const finish = (sums: Sums): RecordsDigest =>
  Object.fromEntries(REPLICATED_DBS.map((db) => [db, { records: sums[db].records, digest: sums[db].sum.toString(16).padStart(64, '0') }])) as RecordsDigest;

/** JSON with object keys sorted: PostgreSQL's jsonb does not keep the order they were written in. */
export function canonicalJson(value: unknown): string {
  if (typeof (value as { toJSON?: unknown } | null)?.toJSON === 'function') return canonicalJson((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
