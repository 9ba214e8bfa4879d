import { STATUS_CODES } from 'node:http';
import { toErrorBody } from '../errors.js';
import type { Logger } from '../log.js';
import { isAborted, markFinished } from './abort.js';
import { securityHeaders } from './security-headers.js';
import type { HttpResponse } from './uws.js';

/**
 * Writing whole answers at the uWS edge: status lines, headers and cookies, JSON, and SPEC 7's
 * error body, mapped once here for every host.
 */

export type Headers = Record<string, string>;

const statusLines = new Map<number, string>();

/** "404 Not Found" etc., built once per code. */
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
}

export interface WriteOptions {
  /** HEAD: headers and length only. */
  head?: boolean;
  /** Length to report for HEAD when the body was never loaded. */
  headLength?: number;
  /** Close after answering: the request body was not (fully) read, so the stream is out of step. */
  closeConnection?: boolean;
  /** `Set-Cookie` values, one header each. */
  cookies?: readonly string[];
}

/**
 * Writes a whole response. Only for code running synchronously inside the uWS handler, which
 * uWS has already corked: corking again there costs a fifth of the throughput.
 */
export function writeResponse(res: HttpResponse, status: number, headers: Headers, body: string | Uint8Array, options: WriteOptions = {}): void {
  // uWS writes "200 OK" itself when no status was written.
  if (status !== 200) res.writeStatus(statusLine(status));
  for (const name in headers) res.writeHeader(name, headers[name]!);
  if (options.cookies) for (const cookie of options.cookies) res.writeHeader('Set-Cookie', cookie);
  if (status === 304 || status === 204) {
    res.endWithoutBody();
  } else if (options.head) {
    // uWS v20.30 aborts on endWithoutBody(length) and would send a body with end() even for
    // HEAD, which breaks keep-alive framing; so the length goes in as a plain header.
    const length = options.headLength ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    res.writeHeader('Content-Length', String(length));
    res.endWithoutBody();
  } else {
    res.end(body, options.closeConnection);
  }
  markFinished(res);
}

/** Writes a whole response after an await: one corked write, skipped if the client has gone. */
export function sendResponse(res: HttpResponse, status: number, headers: Headers, body: string | Uint8Array, options: WriteOptions = {}): void {
  if (isAborted(res)) return;
  res.cork(() => writeResponse(res, status, headers, body, options));
}

const JSON_HEADERS: Headers = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...securityHeaders('resource') };

export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Headers = {}, options: WriteOptions = {}): void {
  const json = { ...JSON_HEADERS, ...headers };
  sendResponse(res, status, json, JSON.stringify(body), options);
}

export interface SendErrorOptions extends WriteOptions {
  /** Fields for the log line. */
  context?: Record<string, unknown>;
}

/** Maps anything thrown to SPEC 7's body, once; 5xx are logged with their stack, 4xx at debug. */
export function sendError(res: HttpResponse, err: unknown, log: Logger, options: SendErrorOptions = {}): void {
  const { status, body, headers, internal } = toErrorBody(err);
  if (internal) log.error({ ...options.context, err }, 'request.failed');
  else log.debug({ ...options.context, code: body.error.code }, 'request.rejected');
  sendJson(res, status, body, headers, options);
}
