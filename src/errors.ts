/** Error codes of SPEC section 7 plus the few the HTTP edge needs; status comes only from here. */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  blocked_secret: 422,
  limit: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * What each code means, in one line of Markdown: the "Meaning" column of docs/errors.md, which a
 * test holds equal to this. Widen a line here when a code gains a new cause.
 */
export const ERROR_MEANING: Readonly<Record<ErrorCode, string>> = {
  bad_request: 'Bad archive, body or parameter',
  unauthorized: 'Missing or invalid token',
  forbidden: 'The token or role cannot do this',
  not_found: 'No such site, file, revision, member, invite, token, domain or endpoint, or one this credential cannot see',
  method_not_allowed: 'The path exists, not with this method',
  conflict:
    'Stale `X-Base-Revision` or `base_revision`, or another deploy landed first, or the custom domain belongs to another site, or the revision to delete is the live one, or the `Idempotency-Key` was used for another request or its first request is still running; nothing was changed',
  gone: 'The site expired or was deleted, or a deletion approval expired',
  too_large: 'A size or count limit is exceeded',
  blocked_secret: 'The leak guard found a secret key',
  limit: 'Plan limit or rate limit',
  internal: 'Something failed on our side',
  unavailable:
    "The deploy queue is full, the server is stopping or out of storage space, a cluster's records database or its blob bucket cannot be reached, another node's change held the records past its bound, or an e-mail could not be sent",
};

export interface ServiceErrorOptions {
  agentMessage?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Extra response headers, e.g. `Retry-After` on 429 and 503. */
  headers?: Record<string, string>;
}

/** The one error type of the service; turned into a response once, at the HTTP edge. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly agentMessage?: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.agentMessage = options.agentMessage;
    this.details = options.details;
    this.headers = options.headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/**
 * A refusal as plain data, the form in which it crosses a thread (an ingest worker's `error`,
 * CONVENTIONS "Worker boundary"); `refusalError` turns it back into the error it stands for.
 */
export interface Refusal {
  code: ErrorCode;
  message: string;
  agentMessage?: string;
  details?: Record<string, unknown>;
}

export function refusalError(refusal: Refusal): ServiceError {
  return new ServiceError(refusal.code, refusal.message, { agentMessage: refusal.agentMessage, details: refusal.details });
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
  agent_message?: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/** Errno codes of a full disk or quota, and LMDB's for a map that could not grow. */
const STORAGE_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'MDB_MAP_FULL']);

/** The `code` the store gives an error when a cluster's records database (PostgreSQL) cannot be reached. */
export const RECORDS_UNAVAILABLE_CODE = 'RECORDS_UNAVAILABLE';

/** The `code` the store gives an error when a cluster's write lock was not free within its bound (another writer stalled). */
export const RECORDS_BUSY_CODE = 'RECORDS_BUSY';

/**
 * The `code` the store gives an error when the blob bucket cannot be reached or refuses us
 * (network, timeouts, 5xx, denied credentials), as the file system gives `ENOSPC`.
 */
export const BUCKET_UNAVAILABLE_CODE = 'BUCKET_UNAVAILABLE';

/**
 * What a client is told when a write failed for lack of space: plain data, so an ingest worker
 * can return it across the thread boundary as it returns any other refusal.
 */
export const STORAGE_FULL = {
  code: 'unavailable',
  message: 'The server is out of storage space, so nothing was published.',
  agentMessage:
    'The service cannot store new files right now because its disk is full. Nothing was published and the live site is unchanged. Retry the same request after the Retry-After delay; if it keeps failing, tell the operator of this service.',
  details: { reason: 'storage_full' },
  retryAfterS: 60,
} as const;

/** What a client is told when a cluster's records database cannot be reached: reads go on from the node's replica, writes wait. */
export const RECORDS_UNAVAILABLE = {
  code: 'unavailable',
  message: 'The service cannot save changes right now, so nothing was changed.',
  agentMessage:
    'The service cannot reach its records database right now. Nothing was changed and everything published stays online. Retry the same request after the Retry-After delay.',
  details: { reason: 'records_unavailable' },
  retryAfterS: 5,
} as const;

/**
 * What a client is told when a cluster's write lock stayed taken past its bound: a stalled node
 * holds it, and PostgreSQL takes it from that node within seconds.
 */
export const RECORDS_BUSY = {
  code: 'unavailable',
  message: 'Another change is taking too long to finish, so nothing was changed.',
  agentMessage:
    'The service could not save the change in time because another change is still in progress. Nothing was changed and everything published stays online. Retry the same request after the Retry-After delay.',
  details: { reason: 'records_busy' },
  retryAfterS: 5,
} as const;

/** What a client is told when the blob bucket cannot be reached: nothing changed, come back later. */
export const BUCKET_UNAVAILABLE = {
  code: 'unavailable',
  message: 'The file storage cannot be reached right now, so nothing was changed.',
  agentMessage:
    'The service cannot reach its file storage right now. Nothing was published or changed, and live sites are unchanged. Retry the same request after the Retry-After delay; if it keeps failing, tell the operator of this service.',
  details: { reason: 'storage_unreachable' },
  retryAfterS: 30,
} as const;

/**
 * Failures of what lies under a request rather than of the request: each is answered `503` with
 * its own reason and `Retry-After`, and still logged as an internal failure, since the operator
 * has to act (free space, bring PostgreSQL or the bucket back).
 */
const OUTAGES = [
  { codes: STORAGE_FULL_CODES, answer: STORAGE_FULL },
  { codes: new Set([RECORDS_UNAVAILABLE_CODE]), answer: RECORDS_UNAVAILABLE },
  { codes: new Set([BUCKET_UNAVAILABLE_CODE]), answer: BUCKET_UNAVAILABLE },
  { codes: new Set([RECORDS_BUSY_CODE]), answer: RECORDS_BUSY },
] as const;

/** True when `err`, or an error it wraps as its `cause`, has one of `codes`. */
function hasCode(err: unknown, codes: ReadonlySet<string>): boolean {
  let candidate = err;
  for (let depth = 0; depth < 5 && candidate !== null && typeof candidate === 'object'; depth++) {
    if (codes.has(String((candidate as { code?: unknown }).code))) return true;
    candidate = (candidate as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A write refused for lack of the records database before it was tried (PostgreSQL is known not
 * to answer): answered and logged like any failure of it.
 */
export function recordsSilentError(): Error {
  return Object.assign(new Error('The records database (PostgreSQL) did not answer in time; the write was refused before its work began.'), {
    code: RECORDS_UNAVAILABLE_CODE,
  });
}

/** True for a failed write whose cause is a full disk, quota or LMDB map, also when it is wrapped as a `cause`. */
export const isStorageFull = (err: unknown): boolean => hasCode(err, STORAGE_FULL_CODES);

/** True for an error of the blob bucket being unreachable, also when it is wrapped as a `cause`. */
export const isBucketUnavailable = (err: unknown): boolean => hasCode(err, OUTAGES[2].codes);

/** True for an error of the records database being unreachable, also when it is wrapped as a `cause`. */
export const isRecordsUnavailable = (err: unknown): boolean => hasCode(err, OUTAGES[1].codes);

/** True for an error of the cluster's write lock not being free in time, also when it is wrapped as a `cause`. */
export const isRecordsBusy = (err: unknown): boolean => hasCode(err, OUTAGES[3].codes);

/** Every 503 tells the client when to come back; a full disk takes longer to clear than a busy pool. */
function retryAfter(code: ErrorCode, details: Record<string, unknown> | undefined, headers: Record<string, string>): Record<string, string> {
  if (code !== 'unavailable' || headers['Retry-After'] !== undefined) return headers;
  const outage = OUTAGES.find(({ answer }) => answer.details.reason === details?.reason);
  return { ...headers, 'Retry-After': String(outage?.answer.retryAfterS ?? 5) };
}

/**
 * Maps anything thrown to a status and SPEC 7 body. Matches on `code` rather than `instanceof`
 * because errors may cross threads or module copies. A write that failed on a full disk, a
 * cluster's records database and a blob bucket that cannot be reached become `503 unavailable`
 * with `Retry-After`; other unknown errors become a generic 500.
 */
export function toErrorBody(err: unknown): { status: number; body: ErrorBody; headers: Record<string, string>; internal: boolean } {
  const candidate = err as Partial<ServiceError> | null;
  if (candidate && isErrorCode(candidate.code) && typeof candidate.message === 'string' && candidate.code !== 'internal') {
    const body: ErrorBody = { error: { code: candidate.code, message: candidate.message } };
    if (candidate.details) body.error.details = candidate.details;
    if (candidate.agentMessage) body.agent_message = candidate.agentMessage;
    const headers = retryAfter(candidate.code, candidate.details, candidate.headers ?? {});
    return { status: ERROR_STATUS[candidate.code], body, headers, internal: false };
  }
  const outage = OUTAGES.find(({ codes }) => hasCode(err, codes));
  if (outage) {
    const { code, message, agentMessage, details, retryAfterS } = outage.answer;
    const body: ErrorBody = { error: { code, message, details: { ...details } }, agent_message: agentMessage };
    return { status: ERROR_STATUS.unavailable, body, headers: { 'Retry-After': String(retryAfterS) }, internal: true };
  }
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'Something went wrong on our side. Please try again.' } },
    headers: {},
    internal: true,
  };
}
