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

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
  agent_message?: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/**
 * Maps anything thrown to a status and SPEC 7 body. Matches on `code` rather than `instanceof`
 * because errors may cross threads or module copies. Unknown errors become a generic 500.
 */
export function toErrorBody(err: unknown): { status: number; body: ErrorBody; headers: Record<string, string>; internal: boolean } {
  const candidate = err as Partial<ServiceError> | null;
  if (candidate && isErrorCode(candidate.code) && typeof candidate.message === 'string' && candidate.code !== 'internal') {
    const body: ErrorBody = { error: { code: candidate.code, message: candidate.message } };
    if (candidate.details) body.error.details = candidate.details;
    if (candidate.agentMessage) body.agent_message = candidate.agentMessage;
    return { status: ERROR_STATUS[candidate.code], body, headers: candidate.headers ?? {}, internal: false };
  }
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'Something went wrong on our side. Please try again.' } },
    headers: {},
    internal: true,
  };
}
