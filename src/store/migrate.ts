import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, Key } from 'lmdb';
import { openMetadataDbs, type MetadataDbs } from './metadata-dbs.js';
import { openRecordsLog } from './records-log.js';
import { REPLICATED_DBS, type RecordWrite, type ReplicatedDb } from './replica.js';

/**
 * Moving an embedded install into a cluster: the records of a data directory's LMDB go into an
 * empty PostgreSQL in one transaction, which commits only if what PostgreSQL then holds has the
 * same count and digest, database by database, as the source.
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
const MOD = 1n << 256n;

/** Copies the records of `<dataDir>/meta` into the empty cluster at `databaseUrl`, verified. */
export async function copyRecordsToCluster(dataDir: string, databaseUrl: string): Promise<RecordsCopyReport> {
  const metaPath = join(dataDir, 'meta');
  if (!existsSync(join(metaPath, 'data.mdb'))) throw new Error(`${dataDir} holds no Plinth data directory (no meta/data.mdb).`);
  const dbs = openMetadataDbs(metaPath);
  try {
    if (dbs.replicaState.get('cluster') !== undefined) {
      throw new Error(`${dataDir} is a cluster node's replica, not an embedded install: its records already live in PostgreSQL.`);
    }
    const holders = otherProcesses(dbs);
    if (holders.length > 0) throw new Error(`Stop the server first: process ${holders.join(', ')} has ${dataDir} open.`);
    const source = digestOf((each) => eachLocalRecord(dbs, each));
    const log = await openRecordsLog({ url: databaseUrl, origin: `${process.pid}/migrate`, maxConnections: 1 });
    try {
      const { records, changes } = await log.importRecords(localBatches(dbs), async (read) => {
        const copied = await digestOfAsync(read);
        const differing = REPLICATED_DBS.filter((db) => copied[db].records !== source[db].records || copied[db].digest !== source[db].digest);
        if (differing.length > 0) throw new Error(`The copy differs from the source in ${differing.join(', ')}; nothing was committed.`);
      });
      return { records, changes, digest: source };
    } finally {
      await log.close();
    }
  } finally {
    await dbs.env.close();
  }
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
