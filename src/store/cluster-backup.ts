import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, open, readdir, readFile, rename, rmdir, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type pg from 'pg';
import { publishTemp, writeTemp } from './atomic-file.js';
import { decodedHash } from './bucket-blob-store.js';
import { createS3Bucket, forEachLimit, NOT_IN_BUCKET } from './bucket.js';
import { isPackKey } from './bucket-packs.js';
import { loadPg } from './records-connections.js';
import { hashTask } from './records-log.js';
import { SCHEMA_VERSION } from './records-schema.js';
import { schemaRefusal } from './schema-version.js';
import type { BucketOptions } from './types.js';

/**
 * A backup of a cluster is its two services, copied so that they agree: PostgreSQL's records by
 * `pg_dump` (one snapshot: every record, the change log, the cluster's id and schema version),
 * then every object of the bucket, each checked against its sha256 as it arrives. A revision is
 * committed only after its blobs are in the bucket, so every blob the snapshot references was
 * there when it was taken; the only thing that deletes from the bucket is garbage collection, and
 * this holds the lock every node's collection takes, so none runs until the copy is done. The
 * nodes go on serving and taking deploys meanwhile; what they write after the snapshot is copied
 * or not, and is unreferenced in the backup either way.
 *
 * A restore checks every file of the backup first, then puts back the objects the bucket lacks,
 * then the records, in one PostgreSQL transaction, with no node connected.
 */

export const CLUSTER_BACKUP_FORMAT = 'plinth-cluster-backup';
const FORMAT_VERSION = 1;
const MANIFEST = 'backup.json';
const DUMP = 'records.pgdump';
const OBJECTS_DIR = 'bucket';
/** The task name of bucket garbage collection (runtime/sweeper.ts), whose lock a backup holds. */
const BUCKET_GC_TASK = 'bucket-gc';
/** Objects copied at once. */
const COPY_CONCURRENCY = 8;
const BLOB_KEY = /^blobs\/[0-9a-f]{2}\/[0-9a-f]{2}\/([0-9a-f]{64})(?:\.(br|gz))?$/;

export interface ClusterBackupManifest {
  format: typeof CLUSTER_BACKUP_FORMAT;
  version: number;
  createdAt: string;
  clusterId: string;
  schemaVersion: number;
  bucket: string;
  records: { file: string; bytes: number; sha256: string };
  objects: Array<{ key: string; bytes: number; sha256: string }>;
}

export interface ClusterBackupReport {
  cluster: string;
  schemaVersion: number;
  recordsBytes: number;
  objects: number;
  objectBytes: number;
  /** Blobs and variants among them whose bytes were checked against their names. */
  blobsChecked: number;
}

export interface ClusterRestoreReport {
  cluster: string;
  schemaVersion: number;
  recordsBytes: number;
  objects: number;
  /** Objects the bucket lacked (or held with another size), put back. */
  objectsUploaded: number;
}

export interface ClusterBackupOptions {
  databaseUrl: string;
  bucket: BucketOptions;
  /** An empty or missing folder. */
  target: string;
  /** The `pg_dump` command (default: the one on PATH). */
  pgDump?: string;
  /** Progress for the person running it. */
  note?: (line: string) => void;
}

export async function backupCluster(options: ClusterBackupOptions): Promise<ClusterBackupReport> {
  const target = resolve(options.target);
  await mkdir(target, { recursive: true });
  if ((await readdir(target)).length > 0) throw new Error(`${target} is not empty: a backup goes into a new folder.`);
  // A backup holds every record (e-mail addresses, token and password hashes): its owner's alone.
  await chmod(target, 0o700);
  const client = await connect(options.databaseUrl, 'plinth backup-cluster');
  const bucket = createS3Bucket(options.bucket);
  try {
    const cluster = await clusterOf(client);
    // The lock of every node's bucket garbage collection, for this whole session.
    const gcLock = hashTask(BUCKET_GC_TASK);
    if (!(await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [gcLock])).rows[0]!.ok) {
      options.note?.("A node is collecting the bucket's garbage; waiting for it to finish.");
      await client.query('SELECT pg_advisory_lock($1)', [gcLock]);
    }
    await runTool(options.pgDump ?? 'pg_dump', ['--format=custom', '--file', join(target, DUMP)], options.databaseUrl);
    const records = { file: DUMP, ...(await fileDigest(join(target, DUMP))) };

    const objects: ClusterBackupManifest['objects'] = [];
    let blobsChecked = 0;
    const tmpDir = join(target, 'tmp');
    await mkdir(tmpDir);
    const listed: Array<{ key: string }> = [];
    for await (const object of bucket.list('')) listed.push(object);
    await forEachLimit(listed, COPY_CONCURRENCY, async ({ key }) => {
      const path = objectPath(target, key);
      const body = await bucket.download(key).catch((err: unknown) => {
        // Blobs stay while the lock is held; anything else may come and go (a node's start-up
        // check of the bucket writes and deletes a probe object), and is no part of the backup.
        if ((err as { code?: string }).code === NOT_IN_BUCKET && !BLOB_KEY.test(key)) return undefined;
        throw err;
      });
      if (body === undefined) return;
      const temp = await writeTemp(tmpDir, body, false);
      if ((await blobMismatch(key, temp.path, temp.sha256)) === true)
        throw new Error(`The bucket's ${key} does not hash to its name: the bucket holds a damaged blob.`);
      if (BLOB_KEY.test(key)) blobsChecked++;
      await publishTemp(temp.path, path, false);
      objects.push({ key, bytes: temp.size, sha256: temp.sha256 });
    });
    blobsChecked += await checkPackedRanges(client, target, tmpDir, new Set(objects.map((object) => object.key).filter(isPackKey)));
    await rmdir(tmpDir);
    objects.sort((a, b) => (a.key < b.key ? -1 : 1));

    const manifest: ClusterBackupManifest = {
      format: CLUSTER_BACKUP_FORMAT,
      version: FORMAT_VERSION,
      createdAt: new Date().toISOString(),
      clusterId: cluster.clusterId,
      schemaVersion: cluster.schemaVersion,
      bucket: options.bucket.bucket,
      records,
      objects,
    };
    // Written last, after everything is synced: its presence marks the backup complete.
    await syncTree(target);
    await writeFile(join(target, `${MANIFEST}.tmp`), `${JSON.stringify(manifest, null, 1)}\n`, { flush: true });
    await rename(join(target, `${MANIFEST}.tmp`), join(target, MANIFEST));
    return {
      cluster: cluster.clusterId,
      schemaVersion: cluster.schemaVersion,
      recordsBytes: records.bytes,
      objects: objects.length,
      objectBytes: objects.reduce((sum, object) => sum + object.bytes, 0),
      blobsChecked,
    };
  } finally {
    bucket.close();
    // Ending the session lets garbage collection run again.
    await client.end().catch(() => undefined);
  }
}

export interface ClusterRestoreOptions {
  databaseUrl: string;
  bucket: BucketOptions;
  /** A complete backup folder. */
  source: string;
  /** The `pg_restore` command (default: the one on PATH). */
  pgRestore?: string;
  note?: (line: string) => void;
}

export async function restoreCluster(options: ClusterRestoreOptions): Promise<ClusterRestoreReport> {
  const source = resolve(options.source);
  const manifest = await readManifest(source);
  // A backup of a newer schema is restored by a Plinth that knows it.
  const refusal = schemaRefusal({ version: manifest.schemaVersion }, SCHEMA_VERSION);
  if (refusal !== undefined) throw new Error(`This backup's ${refusal}`);

  // Every byte is checked before anything is changed.
  const dump = await fileDigest(join(source, manifest.records.file));
  if (dump.sha256 !== manifest.records.sha256)
    throw new Error(`${join(source, manifest.records.file)} is damaged (its sha256 differs from backup.json's); nothing was restored.`);
  await forEachLimit(manifest.objects, COPY_CONCURRENCY, async (object) => {
    const path = objectPath(source, object.key);
    const found = await fileDigest(path).catch(() => undefined);
    if (found === undefined || found.sha256 !== object.sha256 || found.bytes !== object.bytes) {
      throw new Error(
        `${path} is ${found === undefined ? 'missing' : 'damaged'} (backup.json lists ${object.bytes} bytes with another sha256); nothing was restored.`,
      );
    }
    if ((await blobMismatch(object.key, path, found.sha256)) === true) throw new Error(`${path} does not hash to its name; nothing was restored.`);
  });

  const client = await connect(options.databaseUrl, 'plinth restore-cluster');
  const bucket = createS3Bucket(options.bucket);
  try {
    const others = await client.query<{ application_name: string; client_addr: string | null }>(
      `SELECT application_name, client_addr::text FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    if (others.rows.length > 0) {
      const who = [...new Set(others.rows.map((row) => row.client_addr ?? 'a local socket'))].join(', ');
      throw new Error(
        `${others.rows.length} other connection(s) to the database (from ${who}): stop every node, and any plinth admin, before restoring; nothing was restored.`,
      );
    }

    let objectsUploaded = 0;
    await forEachLimit(manifest.objects, COPY_CONCURRENCY, async (object) => {
      const found = await bucket.head(object.key);
      // A blob's key names its bytes, and a pack's is never reused: one of the same size is the
      // same. Anything else (the bucket's marker) is put back as it was.
      if (found !== undefined && found.size === object.bytes && (BLOB_KEY.test(object.key) || isPackKey(object.key))) return;
      await bucket.upload(object.key, objectPath(source, object.key), object.bytes);
      objectsUploaded++;
    });
    options.note?.(`The bucket holds every object of the backup (${objectsUploaded} put back); restoring the records.`);

    await runTool(
      options.pgRestore ?? 'pg_restore',
      ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', join(source, manifest.records.file)],
      options.databaseUrl,
    );
    // What the nodes noted of the bucket then is not what it holds now: deploys ask the bucket again.
    // (The pack rows stay: they are records, and every pack they name was copied back above.)
    await client.query("DO $$ BEGIN IF to_regclass('plinth_bucket_objects') IS NOT NULL THEN DELETE FROM plinth_bucket_objects; END IF; END $$");
    const restored = await clusterOf(client);
    if (restored.clusterId !== manifest.clusterId)
      throw new Error(`After the restore the database holds cluster ${restored.clusterId}, not the backup's ${manifest.clusterId}.`);
    return {
      cluster: manifest.clusterId,
      schemaVersion: manifest.schemaVersion,
      recordsBytes: manifest.records.bytes,
      objects: manifest.objects.length,
      objectsUploaded,
    };
  } finally {
    bucket.close();
    await client.end().catch(() => undefined);
  }
}

async function connect(url: string, name: string): Promise<pg.Client> {
  const client = new (loadPg().Client)({ connectionString: url, application_name: name, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL at PLINTH_DATABASE_URL cannot be used: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return client;
}

/** The cluster's id and schema version; refuses a database that holds no Plinth cluster. */
async function clusterOf(client: pg.Client): Promise<{ clusterId: string; schemaVersion: number }> {
  const tables = await client.query<{ name: string | null }>("SELECT to_regclass('plinth_meta')::text AS name");
  if (tables.rows[0]?.name == null) throw new Error('The database at PLINTH_DATABASE_URL holds no Plinth cluster (no plinth_meta table).');
  const id = await client.query<{ value: string }>("SELECT value FROM plinth_meta WHERE key = 'cluster_id'");
  const version = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM plinth_migrations');
  return { clusterId: id.rows[0]!.value, schemaVersion: version.rows[0]?.version ?? 0 };
}

async function readManifest(source: string): Promise<ClusterBackupManifest> {
  let manifest: ClusterBackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(source, MANIFEST), 'utf8')) as ClusterBackupManifest;
  } catch (err) {
    throw new Error(`${source} holds no complete cluster backup (${MANIFEST} is written last, and is missing or unreadable).`, { cause: err });
  }
  if (manifest.format !== CLUSTER_BACKUP_FORMAT) throw new Error(`${join(source, MANIFEST)} is not a cluster backup's.`);
  if (manifest.version !== FORMAT_VERSION)
    throw new Error(`${source} has cluster backup format ${manifest.version}; this Plinth reads format ${FORMAT_VERSION}.`);
  if (manifest.records.file !== DUMP) throw new Error(`${join(source, MANIFEST)} names an unexpected records file.`);
  return manifest;
}

/** Where an object's copy lives: `<dir>/bucket/<key>`, refusing keys that would leave that folder. */
export function objectPath(dir: string, key: string): string {
  const segments = key.split('/');
  if (key === '' || segments.some((segment) => segment === '' || segment === '.' || segment === '..') || key.includes('\\') || key.includes('\u0000')) {
    throw new Error(`The bucket holds an object whose name cannot be a file: ${JSON.stringify(key)}.`);
  }
  return join(dir, OBJECTS_DIR, ...segments);
}

/** For a blob or variant key: whether its bytes fail to hash (a variant: to decode) to its name. */
/**
 * Checks every packed object whose pack was copied (the rows the snapshot holds name only packs
 * that garbage collection, locked out meanwhile, could not delete): its range of the copy must
 * hash to its name, as a node checks it when it reads it. Resolves how many were checked.
 */
async function checkPackedRanges(client: pg.Client, target: string, tmpDir: string, packs: ReadonlySet<string>): Promise<number> {
  if (packs.size === 0) return 0;
  const rows = await client.query<{ key: string; pack: string; byte_offset: string; size: string }>(
    'SELECT key, pack, byte_offset, size FROM plinth_packed_objects WHERE pack = ANY($1::text[])',
    [[...packs]],
  );
  await forEachLimit(rows.rows, COPY_CONCURRENCY, async (row) => {
    const start = Number(row.byte_offset);
    const range = createReadStream(objectPath(target, row.pack), { start, end: start + Number(row.size) - 1 });
    const temp = await writeTemp(tmpDir, range, false);
    try {
      if (temp.size !== Number(row.size) || (await blobMismatch(row.key, temp.path, temp.sha256)) !== false)
        throw new Error(`The bucket's ${row.pack} holds ${row.key} damaged (or not at all): the bucket holds a damaged blob.`);
    } finally {
      await unlink(temp.path).catch(() => undefined);
    }
  });
  return rows.rows.length;
}

async function blobMismatch(key: string, path: string, sha256: string): Promise<boolean | undefined> {
  const match = BLOB_KEY.exec(key);
  if (!match) return undefined;
  const encoding = match[2] === undefined ? undefined : match[2] === 'br' ? 'br' : 'gzip';
  const actual = encoding === undefined ? sha256 : await decodedHash(path, encoding);
  return actual !== match[1];
}

async function fileDigest(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Runs pg_dump or pg_restore against the database of `url`. The password goes in the environment
 * (PGPASSWORD), never on the command line, where every user of the machine could read it.
 */
/**
 * The database's address for a PostgreSQL tool's command line, which every user of the machine
 * can read, and its password for the tool's environment. libpq (like pg) also takes the password
 * as a `password` query parameter, which wins over the user part.
 */
export function toolConnection(url: string): { dbname: string; env: { PGPASSWORD?: string } } {
  const parsed = new URL(url);
  const password = parsed.searchParams.get('password') ?? decodeURIComponent(parsed.password);
  parsed.password = '';
  parsed.searchParams.delete('password');
  return { dbname: parsed.toString(), env: password ? { PGPASSWORD: password } : {} };
}

function runTool(command: string, args: string[], url: string): Promise<void> {
  const { dbname, env } = toolConnection(url);
  return new Promise((done, fail) => {
    const child = spawn(command, [...args, '--dbname', dbname], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors = `${errors}${chunk.toString()}`.slice(-4000)));
    child.on('error', (err) =>
      fail(new Error(`${command} could not be run (${err.message}): install PostgreSQL's client tools (Debian: postgresql-client).`, { cause: err })),
    );
    child.on('exit', (code, signal) => {
      if (code === 0) done();
      else fail(new Error(`${command} failed (${signal ?? `exit ${code}`}): ${errors.trim() || 'no message'}`));
    });
  });
}

/** fsync every file and folder under `dir` (the copies were written without, for speed). */
async function syncTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const paths = [...entries.map((entry) => join(entry.parentPath, entry.name)), dir];
  await forEachLimit(paths, COPY_CONCURRENCY, async (path) => {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}
