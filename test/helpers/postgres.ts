import { hasPostgres, postgresBinDir, startPostgres, type PostgresServer } from '../../bench/lib/postgres.mjs';

/**
 * A private PostgreSQL server for a test file: Debian's `postgresql` binaries, a fresh cluster in
 * a temporary directory, listening on a free loopback port only (bench/lib/postgres.mjs starts it,
 * for the tests and the cluster bench alike). `url` names a database of its own; `pause` and
 * `resume` stop and start the server on the same files (an outage).
 */
export type TestPostgres = PostgresServer;

export { hasPostgres, postgresBinDir, startPostgres };
