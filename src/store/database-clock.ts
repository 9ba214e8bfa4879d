import type pg from 'pg';
import { timeBound } from './records-connections.js';

/**
 * PostgreSQL's clock as a node sees it. Expiry, sessions, single-use windows and rate windows
 * must mean the same on every node, so a node whose own clock is off goes by PostgreSQL's: it
 * reads it along with queries it makes anyway (every catch-up, the first look at the log under
 * the write lock) and, when that reading is older than `CLOCK_READING_MS`, with a query of its own.
 */

/** Clocks that differ by less than this are taken to agree; past it a node goes by PostgreSQL's. */
export const CLOCK_TOLERANCE_MS = 500;
/** How old a reading of PostgreSQL's clock may get before it is renewed. */
export const CLOCK_READING_MS = 10_000;

/** A select-list item giving PostgreSQL's clock, in epoch milliseconds, as `clock`. */
export const CLOCK_COLUMN = '(extract(epoch from clock_timestamp()) * 1000)::float8 AS clock';

export interface DatabaseClockOptions {
  /** This node's own clock. */
  now: () => number;
  /** Told each time the offset changes. */
  onOffset?: (offsetMs: number) => void;
  /** Runs a query on a connection (the clock reads itself when its reading is old). */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Whether the clock may read itself now (not while its log has yet to reach PostgreSQL). */
  mayRead(): boolean;
}

export interface DatabaseClock {
  /**
   * Runs a query whose first row has `clock` (`CLOCK_COLUMN`), and takes the reading; `timeoutMs`
   * bounds the wait for its answer (records-connections.ts; unset: a query that moves no bulk). A
   * query of several statements (no parameters) gives its last statement's result, which must be
   * the one with the clock. `prepared`: one statement the connection keeps parsed (timeBound).
   */
  query<R extends pg.QueryResultRow & { clock: number }>(
    client: pg.PoolClient,
    text: string,
    values?: unknown[],
    timeoutMs?: number,
    prepared?: boolean,
  ): Promise<pg.QueryResult<R>>;
  /**
   * PostgreSQL's clock less this node's (0 while they agree within `CLOCK_TOLERANCE_MS`). A
   * reading older than `CLOCK_READING_MS` is renewed in the background, so a thread that only
   * serves follows a clock being corrected.
   */
  offsetMs(): number;
}

export function createDatabaseClock(options: DatabaseClockOptions): DatabaseClock {
  let offset = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<unknown> | undefined;

  async function query<R extends pg.QueryResultRow & { clock: number }>(
    client: pg.PoolClient,
    text: string,
    values: unknown[] = [],
    timeoutMs?: number,
    prepared = false,
  ): Promise<pg.QueryResult<R>> {
    const sent = performance.now();
    const answer = timeoutMs === undefined ? await client.query<R>(text, values) : await timeBound<R>(client, text, values, timeoutMs, prepared);
    // Several statements answer with one result each.
    const result = (Array.isArray(answer) ? answer.at(-1) : answer) as pg.QueryResult<R>;
    const roundTrip = performance.now() - sent;
    // A slow answer says little about when PostgreSQL read its clock.
    if (roundTrip > CLOCK_TOLERANCE_MS) return result;
    readAt = performance.now();
    const next = nextOffset(offset, Number(result.rows[0]!.clock) - (options.now() - roundTrip / 2));
    if (next !== offset) {
      offset = next;
      options.onOffset?.(offset);
    }
    return result;
  }

  return {
    query,
    offsetMs() {
      if (reading === undefined && performance.now() - readAt > CLOCK_READING_MS && options.mayRead()) {
        // Counted from the try, so that slow answers (not taken as readings) are not asked again at once.
        readAt = performance.now();
        reading = options
          .withClient((client) => query(client, `SELECT ${CLOCK_COLUMN}`))
          .catch(() => undefined)
          .finally(() => {
            reading = undefined;
          });
      }
      return offset;
    },
  };
}

/**
 * The offset a node applies after measuring `measured` (PostgreSQL's clock less its own) while
 * applying `current`: unchanged while the measurement is within the tolerance of it, so readings
 * that differ by their round trip do not make the clock jitter; 0 while the clocks agree, so a
 * node whose clock is right uses it as it is.
 */
export function nextOffset(current: number, measured: number): number {
  if (Math.abs(measured - current) <= CLOCK_TOLERANCE_MS) return current;
  return Math.abs(measured) <= CLOCK_TOLERANCE_MS ? 0 : Math.round(measured);
}
