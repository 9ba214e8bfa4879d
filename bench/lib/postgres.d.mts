/** A private PostgreSQL server on loopback (see postgres.mjs). */
export interface PostgresServer {
  /** `postgres://…@127.0.0.1:<port>/<database>` for a database of its own. */
  url: string;
  port: number;
  /** A new, empty database on the same server. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown) and removes its files. */
  stop(): Promise<void>;
  /** Stops the server but keeps its files, to start it again (an outage). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** The postmaster's PID, then those of the processes it started (for their CPU time). */
  pids(): number[];
  /** Stops (SIGSTOP) every process of the server: it accepts connections and never answers. */
  freeze(): void;
  /** Resumes (SIGCONT) a frozen server. */
  thaw(): void;
}

export function postgresBinDir(): string | undefined;
export function hasPostgres(): boolean;
export function startPostgres(): Promise<PostgresServer>;
