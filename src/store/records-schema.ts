import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { BULK_QUERY_MS, DATABASE_ANSWER_MS, isConnectionError, timeBound } from './records-connections.js';
import { checkSchema, READABLE_FROM_KEY, type DatabaseSchema } from './schema-version.js';

/** The tables of a cluster's records in PostgreSQL, created and upgraded by versioned migrations. */

const MIGRATE_LOCK = 7_000_002;
/** Another node may be migrating: migrations are short, but may take longer than a write's lock wait. */
const MIGRATE_LOCK_WAIT = '60s';
const MIGRATE_LOCK_QUERY_MS = 60_000 + DATABASE_ANSWER_MS;

/**
 * Versioned migrations, applied in order at start-up, once per database. Nodes of this release
 * and the one before share the database during a rolling upgrade: a migration only adds what
 * older nodes ignore, and removes only what the release before already stopped using, raising
 * `schema_readable_from` when it does (schema-version.ts, docs/operating.md "Upgrading a cluster").
 * A new record family needs no migration (records of every family share `plinth_records`): nodes
 * of the release before skip its writes in the change log, and a replica that skipped a family is
 * rebuilt once its node knows it (replica.ts, KNOWN_DBS).
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE plinth_meta (key text PRIMARY KEY, value text NOT NULL);
   CREATE TABLE plinth_changes (seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), origin text NOT NULL, writes jsonb NOT NULL);
   CREATE TABLE plinth_records (db text NOT NULL, key text NOT NULL, value jsonb NOT NULL, PRIMARY KEY (db, key));
   CREATE TABLE plinth_counters (scope text NOT NULL, window_start bigint NOT NULL, hits integer NOT NULL, PRIMARY KEY (scope, window_start));`,
  // Webhook deliveries: a queue every node takes from (delivery-queue-pg.ts). Older nodes ignore it.
  `CREATE TABLE plinth_webhook_deliveries (
     id text PRIMARY KEY, webhook_id text NOT NULL, site_id text NOT NULL, event text NOT NULL, payload text NOT NULL,
     created_at bigint NOT NULL, state text NOT NULL, attempts integer NOT NULL, next_at bigint NOT NULL,
     lease_until bigint, last_at bigint, last_status integer, last_error text);
   CREATE INDEX plinth_webhook_deliveries_due ON plinth_webhook_deliveries (next_at) WHERE state = 'pending';
   CREATE INDEX plinth_webhook_deliveries_webhook ON plinth_webhook_deliveries (webhook_id, created_at);`,
  // Site analytics (records-analytics.ts): days are `YYYY-MM-DD` text, UTC.
  `CREATE TABLE plinth_analytics_days (site_id text NOT NULL, day text NOT NULL, page_views bigint NOT NULL, crawler_views bigint NOT NULL,
     not_found bigint NOT NULL, bytes bigint NOT NULL, visitors bigint NOT NULL, PRIMARY KEY (site_id, day));
   CREATE TABLE plinth_analytics_items (site_id text NOT NULL, day text NOT NULL, kind text NOT NULL, item text NOT NULL, count bigint NOT NULL,
     PRIMARY KEY (site_id, day, kind, item));
   CREATE TABLE plinth_analytics_visitors (site_id text NOT NULL, day text NOT NULL, hash text NOT NULL, PRIMARY KEY (site_id, day, hash));
   CREATE INDEX plinth_analytics_visitors_day ON plinth_analytics_visitors (day);
   CREATE TABLE plinth_analytics_salts (day text PRIMARY KEY, salt text NOT NULL);`,
  // What the bucket holds, as the nodes uploaded it (bucket-ledger.ts); older nodes ignore it.
  `CREATE TABLE plinth_bucket_objects (key text PRIMARY KEY, size bigint NOT NULL, touched_ms bigint NOT NULL);`,
  // Where each packed blob lives: a byte range of a pack object (bucket-packs.ts). Unlike the
  // ledger above, this is the only record of those objects. Older nodes ignore it.
  `CREATE TABLE plinth_packed_objects (key text PRIMARY KEY, pack text NOT NULL, byte_offset bigint NOT NULL, size bigint NOT NULL, touched_ms bigint NOT NULL);
   CREATE INDEX plinth_packed_objects_pack ON plinth_packed_objects (pack);`,
];

/** The newest schema version this Plinth knows: that of its last migration. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema up to date (once per database, under a lock, whichever node gets there first)
 * and returns the cluster's id. A database newer than this Plinth knows is refused, unchanged
 * (an error with code SCHEMA_TOO_NEW), unless its migrations declared that this version still
 * works there; `seen` is told what the database held.
 */
export async function migrateSchema(client: pg.PoolClient, seen?: (schema: DatabaseSchema) => void): Promise<string> {
  await client.query(`SET lock_timeout = '${MIGRATE_LOCK_WAIT}'`);
  await timeBound(client, 'SELECT pg_advisory_lock($1)', [MIGRATE_LOCK], MIGRATE_LOCK_QUERY_MS);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS plinth_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM plinth_migrations')).rows.map((row) => row.version));
    const schema = await readSchema(client, done);
    const refusal = checkSchema(schema, SCHEMA_VERSION);
    if (refusal) throw refusal;
    seen?.(schema);
    for (const [index, sql] of MIGRATIONS.entries()) {
      const version = index + 1;
      if (done.has(version)) continue;
      await client.query('BEGIN');
      await timeBound(client, sql, [], BULK_QUERY_MS);
      await client.query('INSERT INTO plinth_migrations (version) VALUES ($1)', [version]);
      if (version === 1) await client.query("INSERT INTO plinth_meta (key, value) VALUES ('cluster_id', $1)", [randomUUID()]);
      await client.query('COMMIT');
    }
  } catch (err) {
    if (!isConnectionError(err)) await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]).catch(() => undefined);
    await client.query('RESET lock_timeout').catch(() => undefined);
  }
  return (await client.query<{ value: string }>("SELECT value FROM plinth_meta WHERE key = 'cluster_id'")).rows[0]!.value;
}

/** The database's schema: its newest applied migration, and what its migrations said older nodes may do. */
async function readSchema(client: pg.PoolClient, applied: ReadonlySet<number>): Promise<DatabaseSchema> {
  const version = Math.max(0, ...applied);
  if (version === 0) return { version };
  const row = (await client.query<{ value: string }>('SELECT value FROM plinth_meta WHERE key = $1', [READABLE_FROM_KEY])).rows[0];
  return row === undefined ? { version } : { version, readableFrom: Number(row.value) };
}
