import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { RECORDS_BUSY_CODE, RECORDS_UNAVAILABLE_CODE } from '../errors.js';
import { describePostgresFailure } from './postgres-errors.js';

/**
 * The connections of a records log to PostgreSQL, with every wait bounded (docs/operating.md,
 * "Bounded waits"): PostgreSQL bounds statements, lock waits and idle transactions itself, the
 * client bounds how long it waits for a connection and for each answer, and once PostgreSQL has
 * been silent past the bound, calls fail at once instead of each waiting it out again.
 */

/**
 * A connection, and a query that moves no bulk, must be answered within this; past it PostgreSQL
 * counts as silent: the call fails as unavailable, and so do the calls after it until one gets an
 * answer.
 */
export const DATABASE_ANSWER_MS = 1000;
/** How long a writer waits for the cluster's write lock (PostgreSQL's `lock_timeout`) before giving up with `RECORDS_BUSY`. */
export const WRITE_LOCK_WAIT_MS = 2000;
/**
 * PostgreSQL ends a session whose transaction has been idle this long
 * (`idle_in_transaction_session_timeout`): a node frozen while it holds the write lock loses it
 * this long after its last statement, and the other nodes write again.
 */
export const IDLE_IN_TRANSACTION_MS = 5000;
/** The longest statement (`statement_timeout`), and what a bulk query (a deploy's rows, catching up) may take. */
export const STATEMENT_MS = 30_000;
/** Client side, a bulk query waits for its answer a little longer than the server lets it run. */
export const BULK_QUERY_MS = STATEMENT_MS + DATABASE_ANSWER_MS;
/** Client side, waiting for the write lock. */
export const WRITE_LOCK_QUERY_MS = WRITE_LOCK_WAIT_MS + DATABASE_ANSWER_MS;
/** Waiting for one of this handle's own connections to be free (a busy node, not a silent PostgreSQL). */
const POOL_WAIT_MS = 5000;
/**
 * An idle connection is kept this long (pg's default is 10 s). A new one costs PostgreSQL a
 * process whose caches start cold, and loses the statements the last one kept prepared: a deploy
 * that came more than 10 s after the last paid both, on its path to the answer.
 */
const IDLE_CONNECTION_MS = 300_000;

/**
 * TCP on every connection, both ways, for a machine that vanished (a stopped process's kernel
 * still acknowledges, so this never ends a frozen node's session: the idle-transaction bound
 * does). PostgreSQL drops a session whose peer stays silent for about 25 s, or leaves what it
 * sent unacknowledged for 15 s: its locks, an upkeep task's too, are freed with it.
 */
const SERVER_TCP = '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c tcp_user_timeout=15000';

/**
 * The PostgreSQL client, loaded when the first connection is made: an install without
 * PLINTH_DATABASE_URL never uses it, and it cost each start of the server and of every admin
 * command a tenth of a second.
 */
const requireModule = createRequire(import.meta.url);
let pgModule: typeof pg | undefined;
export const loadPg = (): typeof pg => (pgModule ??= requireModule('pg') as typeof pg);

/** The settings of every connection to PostgreSQL; the client's own bounds are `BoundedClient`'s. */
export function connectionSettings(url: string) {
  return {
    connectionString: url,
    statement_timeout: STATEMENT_MS,
    lock_timeout: WRITE_LOCK_WAIT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    options: SERVER_TCP,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

let boundedClient: (new (config?: pg.ClientConfig) => pg.Client) | undefined;

/**
 * A connection that gives PostgreSQL `DATABASE_ANSWER_MS` to connect and to answer each query
 * (a query with a `query_timeout` of its own gets that). pg's own timeouts would do, but they
 * count time this process spent not listening: a node whose event loop or CPU was held up past
 * the bound would take an answer waiting in its socket for silence. Here the answer is read first.
 */
export function boundedClientClass(): new (config?: pg.ClientConfig) => pg.Client {
  // Made once, when pg is first loaded.
  if (boundedClient) return boundedClient;
  class BoundedClient extends loadPg().Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: 0, query_timeout: undefined });
      const query = super.query.bind(this) as (...args: unknown[]) => unknown;
      this.query = ((config: unknown, ...rest: unknown[]) => {
        let own: number | undefined;
        if (typeof config === 'object' && config !== null && 'query_timeout' in config) {
          own = (config as { query_timeout?: number }).query_timeout;
          // pg would time it out itself too, not knowing better.
          config = { ...(config as object), query_timeout: undefined };
        }
        const work = query(config, ...rest);
        if (!(work instanceof Promise)) return work;
        return boundedWait(work, own ?? DATABASE_ANSWER_MS, 'Query read timeout', () => this.cut());
      }) as pg.Client['query'];
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | void {
      const connected = boundedWait(super.connect() as Promise<unknown>, DATABASE_ANSWER_MS, 'timeout expired', () => this.cut()).then(() => this);
      if (callback === undefined) return connected;
      connected.then(() => callback(undefined as unknown as Error), callback);
    }

    /** Drops the connection (PostgreSQL ends its transaction and locks once it notices). */
    private cut(): void {
      (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    }
  }
  return (boundedClient = BoundedClient);
}

/**
 * `work`, or after `ms` an error with `message` (and `expire` called). The deadline is judged
 * after this process has read what arrived meanwhile (a timer, then an immediate: I/O is read in
 * between), so only time PostgreSQL kept silent counts, not time this process was held up.
 */
function boundedWait<T>(work: Promise<T>, ms: number, message: string, expire: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        expire();
        reject(new Error(message));
      });
    }, ms);
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

export interface RecordsConnections {
  /**
   * Runs `fn` on a connection of the pool. Failures of the connection become `RECORDS_UNAVAILABLE`
   * errors (the connection is dropped, which ends its transaction and its locks), a lock wait past
   * its bound `RECORDS_BUSY`.
   */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** False while PostgreSQL is known to be silent: its last call got no answer within the bound. */
  answering(): boolean;
  /** Calls that failed so far (PostgreSQL unreachable or silent, or a query it refused), for operators' metrics. */
  errors(): number;
  end(): Promise<void>;
}

export function openConnections(url: string, maxConnections: number): RecordsConnections {
  const pool = new (loadPg().Pool)({
    ...connectionSettings(url),
    max: maxConnections,
    connectionTimeoutMillis: POOL_WAIT_MS,
    idleTimeoutMillis: IDLE_CONNECTION_MS,
    // Idle connections do not keep a process alive (a command that forgot to close its store).
    allowExitOnIdle: true,
    Client: boundedClientClass(),
  });
  // An idle connection that breaks (the server restarting) must not take the process down.
  pool.on('error', () => undefined);

  // Once PostgreSQL has been silent, calls fail at once rather than each waiting out the bound
  // again. A moment later one call at a time tries it again; the first answer ends this.
  let silentAt: number | undefined;
  let probing = false;
  let errors = 0;

  async function withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let probe = false;
    if (silentAt !== undefined) {
      if (probing || performance.now() - silentAt < DATABASE_ANSWER_MS) {
        errors++;
        throw unavailable(Object.assign(new Error(`no answer within ${DATABASE_ANSWER_MS} ms to the last call`), { code: 'ETIMEDOUT' }), url);
      }
      probe = probing = true;
    }
    try {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        // A refused connection is an answer (PostgreSQL is down, not hung).
        silentAt = isSilence(err) ? performance.now() : undefined;
        errors++;
        throw unavailable(err, url);
      }
      // The server can end a connection between two queries (a restart): the client then emits
      // 'error' while it is checked out, which would take the process down without a listener.
      let broken = false;
      const onError = (): void => {
        broken = true;
      };
      client.on('error', onError);
      try {
        const result = await fn(client);
        silentAt = undefined;
        return result;
      } catch (err) {
        broken ||= isConnectionError(err);
        // A connection the server closed (a restart, an idle transaction ended) was an answer.
        silentAt = isSilence(err) ? performance.now() : undefined;
        // Refusals of ours thrown inside a transaction (a replica too far behind) are not the database's.
        if (broken || err instanceof loadPg().DatabaseError) errors++;
        if (broken || codeOf(err) === '57014') throw unavailable(err, url);
        if (codeOf(err) === '55P03') throw busy(err);
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    } finally {
      if (probe) probing = false;
    }
  }

  return { withClient, answering: () => silentAt === undefined, errors: () => errors, end: () => pool.end() };
}

/**
 * A query answered within `timeoutMs` rather than `DATABASE_ANSWER_MS` (pg's per-query read
 * timeout, `query_timeout`, which its type declarations leave out); `prepared`: sent as a named
 * statement, which the connection keeps (see `statementName`).
 */
export function timeBound<R extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
  timeoutMs: number,
  prepared = false,
): Promise<pg.QueryResult<R>> {
  return client.query<R>({ text, values, query_timeout: timeoutMs, ...(prepared ? { name: statementName(text) } : {}) } as pg.QueryConfig);
}

const statementNames = new Map<string, string>();

/**
 * A name under which each connection keeps `text` parsed, and planned once PostgreSQL finds a
 * generic plan as good (pg prepares it on a connection's first use): statements a node sends
 * often (a replica's poll, a commit) then skip parsing and planning. Only for statements whose
 * text is one of a few and whose result columns are named, not `*`: a prepared `*` would fail
 * once a newer node's migration added a column.
 */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `plinth_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** Rolls back after `err`, unless the connection failed: dropping it ends the transaction, and a ROLLBACK would wait on it. */
export async function rollback(client: pg.ClientBase, err: unknown): Promise<void> {
  if (!isConnectionError(err)) await client.query('ROLLBACK').catch(() => undefined);
}

/** A failure to use PostgreSQL at all, with its cause in the message (start-up and the log show it). */
export function unavailable(err: unknown, url: string): Error {
  return Object.assign(new Error(describePostgresFailure(err, url), { cause: err }), { code: RECORDS_UNAVAILABLE_CODE });
}

function busy(err: unknown): Error {
  return Object.assign(new Error(`The cluster's write lock was not free within ${WRITE_LOCK_WAIT_MS} ms.`, { cause: err }), { code: RECORDS_BUSY_CODE });
}

const codeOf = (err: unknown): string => String((err as { code?: unknown } | undefined)?.code ?? '');
const messageOf = (err: unknown): string => String((err as { message?: unknown } | undefined)?.message ?? '');

/**
 * Errors of the connection itself (the server gone, refused, reset, silent past the bound, or
 * ending a session idle in a transaction), not of a query.
 */
export function isConnectionError(err: unknown): boolean {
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '25P03', '57P01', '57P02', '57P03', '08000', '08003', '08006'].includes(codeOf(err)) ||
    /Connection terminated|connection timeout|timeout expired|Query read timeout|Client has encountered a connection error/i.test(messageOf(err))
  );
}

/**
 * PostgreSQL said nothing within the bound: no connection, or no answer to a query. Not a
 * refusal, a closed connection or an error, which are answers; not a wait for one of this
 * handle's own connections to be free either, which is this node's load.
 */
function isSilence(err: unknown): boolean {
  return codeOf(err) === 'ETIMEDOUT' || /timeout expired|Query read timeout|due to connection timeout/i.test(messageOf(err));
}
