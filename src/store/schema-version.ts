/**
 * Which database schema a node may run on. A cluster's tables are built and upgraded by numbered
 * migrations (records-log.ts); a node knows those up to its own last one, and the database lists
 * the ones applied to it in `plinth_migrations`. During a rolling upgrade nodes of two versions
 * share one database, so migrations come in two steps (docs/operating.md, "Upgrading a cluster"):
 * an expand step that nodes of the previous version keep working on, and, a release later, a
 * contract step that removes what only older versions needed. The contract step raises
 * `schema_readable_from` in `plinth_meta` to the oldest version that still works on the result.
 *
 * A node whose own version is below that (or below the database's, where no migration said
 * otherwise) refuses to start rather than run on tables it does not know.
 */

/** The `code` of the error that refuses a database whose schema is newer than this Plinth runs on. */
export const SCHEMA_TOO_NEW = 'ESCHEMA_TOO_NEW';

/** The `plinth_meta` key a contract migration sets: the oldest schema version whose nodes still work here. */
export const READABLE_FROM_KEY = 'schema_readable_from';

export interface DatabaseSchema {
  /** The highest migration applied to the database (0: none yet). */
  version: number;
  /** `schema_readable_from` from `plinth_meta`, when a migration set it. */
  readableFrom?: number;
}

/**
 * Why a node that knows migrations up to `known` must not run on `database`, or undefined if it
 * may (it then migrates the database up to `known` when that is newer). A database newer than
 * `known` is refused unless its migrations declared, with `schema_readable_from`, that nodes of
 * version `known` still work on it.
 */
export function schemaRefusal(database: DatabaseSchema, known: number): string | undefined {
  if (database.version <= known) return undefined;
  const readableFrom = database.readableFrom ?? database.version;
  if (Number.isInteger(readableFrom) && readableFrom <= known) return undefined;
  return `database schema is version ${database.version}; this Plinth knows up to ${known}: upgrade Plinth (see "Upgrading a cluster" in docs/operating.md).`;
}

/** The refusal as an error with `code` SCHEMA_TOO_NEW, or undefined if the node may run. */
export function checkSchema(database: DatabaseSchema, known: number): Error | undefined {
  const refusal = schemaRefusal(database, known);
  return refusal === undefined ? undefined : Object.assign(new Error(refusal), { code: SCHEMA_TOO_NEW });
}
