/**
 * Why the records database (PostgreSQL) could not be used, in words an operator acts on. Connecting
 * fails for different reasons that need different fixes (a password, a database name, a server
 * that is down, a firewall that drops packets): each keeps its cause, at start-up and in the log.
 */

/** The kinds of failure an operator fixes differently. */
export type PostgresFailure = 'authentication' | 'no_database' | 'refused' | 'timed_out' | 'unknown_host' | 'other';

/** SQLSTATE codes of the server refusing the login: a password, a role, or pg_hba.conf. */
const AUTHENTICATION = new Set(['28P01', '28000']);
const NO_DATABASE = '3D000';
const UNREACHABLE = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
const UNKNOWN_HOST = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME']);

/** Which kind of failure `err` is, looking through wrapped causes and aggregated attempts. */
export function classifyPostgresFailure(err: unknown): PostgresFailure {
  for (const failure of causes(err)) {
    const code = String(failure.code ?? '');
    if (AUTHENTICATION.has(code)) return 'authentication';
    if (code === NO_DATABASE) return 'no_database';
    if (code === 'ECONNREFUSED') return 'refused';
    if (UNKNOWN_HOST.has(code)) return 'unknown_host';
    if (UNREACHABLE.has(code) || /timeout|timed out/i.test(String(failure.message ?? ''))) return 'timed_out';
  }
  return 'other';
}

/**
 * One sentence naming the database (its address, never its password), the kind of failure and
 * the server's or the system's own words, e.g. `The records database (PostgreSQL at
 * db.internal:5432, database "plinth") cannot be used: the user or password was refused
 * (password authentication failed for user "plinth"). Check them in …`
 */
export function describePostgresFailure(err: unknown, url: string): string {
  const kind = classifyPostgresFailure(err);
  const detail = detailOf(err);
  const [what, check] = WORDS[kind];
  return `The records database (${whereOf(url)}) cannot be used: ${what}${detail ? ` (${detail})` : ''}.${check ? ` ${check}` : ''}`;
}

/** What went wrong, and what to check. */
const WORDS: Record<PostgresFailure, [string, string]> = {
  authentication: ['the user or password was refused', "Check them in PLINTH_DATABASE_URL, and the server's pg_hba.conf."],
  no_database: ['the database does not exist', 'Check its name in PLINTH_DATABASE_URL, or create it.'],
  refused: ['the connection was refused', 'Check that PostgreSQL runs and listens on that address and port.'],
  timed_out: ['it did not answer in time', 'Check that the host is up and that no firewall drops the connection.'],
  unknown_host: ['the host name is not known', 'Check the host in PLINTH_DATABASE_URL.'],
  other: ['it cannot be reached', ''],
};

/** `PostgreSQL at host:port, database "name"` from a connection URL, without user or password. */
function whereOf(url: string): string {
  try {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
    return `PostgreSQL at ${parsed.hostname || 'localhost'}:${parsed.port || '5432'}${database ? `, database "${database}"` : ''}`;
  } catch {
    return 'PostgreSQL';
  }
}

interface Failure {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** `err`, its causes and, for an AggregateError (one attempt per address), its attempts. */
function causes(err: unknown): Failure[] {
  const found: Failure[] = [];
  const visit = (candidate: unknown, depth: number): void => {
    if (depth > 5 || candidate === null || typeof candidate !== 'object') return;
    const failure = candidate as Failure;
    found.push(failure);
    if (Array.isArray(failure.errors)) for (const inner of failure.errors) visit(inner, depth + 1);
    visit(failure.cause, depth + 1);
  };
  visit(err, 0);
  return found;
}

/** The words to quote: the server's own message, else the system's (`connect ECONNREFUSED 127.0.0.1:5432`). */
function detailOf(err: unknown): string {
  const all = causes(err);
  const words = (failure: Failure): string => (typeof failure.message === 'string' ? failure.message.trim() : '');
  const server = all.find((failure) => /^[0-9A-Z]{5}$/.test(String(failure.code ?? '')) && words(failure) !== '');
  if (server) return words(server);
  // The outermost words that say anything: an AggregateError of one attempt per address has none.
  const system = all.find((failure) => words(failure) !== '');
  return system ? words(system) : String(all[0]?.code ?? '');
}
