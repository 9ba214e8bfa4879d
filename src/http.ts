import { createReadStream } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { toErrorBody } from './errors.js';
import type { Logger } from './log.js';
import type { HttpResponse } from './uws.js';

/**
 * Helpers at the uWS edge shared by every host: status lines, JSON and error writers, and the
 * file streamer. A response that is not finished synchronously must have `trackAbort` called
 * before its first await; every later write checks `isAborted` and runs inside `cork`.
 */

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

interface TrackedResponse extends HttpResponse {
  plinthAborted?: boolean;
  plinthOnAbort?: Array<() => void>;
}

/** Marks the response as asynchronous: remembers aborts and runs `cleanup` hooks when one happens. */
export function trackAbort(res: HttpResponse, cleanup?: () => void): void {
  const tracked = res as TrackedResponse;
  if (tracked.plinthOnAbort) {
    if (cleanup) tracked.plinthOnAbort.push(cleanup);
    return;
  }
  tracked.plinthOnAbort = cleanup ? [cleanup] : [];
  res.onAborted(() => {
    tracked.plinthAborted = true;
    for (const hook of tracked.plinthOnAbort ?? []) hook();
  });
}

export function isAborted(res: HttpResponse): boolean {
  return (res as TrackedResponse).plinthAborted === true;
}

export type Headers = Record<string, string>;

/** Writes a whole response in one corked write; a no-op if the client has gone. */
/**
 * Writes a whole response. Only for code running synchronously inside the uWS handler, which
 * uWS has already corked: corking again there costs a fifth of the throughput. For `HEAD` the
 * body is not sent but its length is reported (`headLength` when the body was never loaded).
 */
export function writeResponse(
  res: HttpResponse,
  status: number,
  headers: Headers,
  body: string | Uint8Array,
  head = false,
  headLength?: number,
): void {
  // uWS writes "200 OK" itself when no status was written.
  if (status !== 200) res.writeStatus(statusLine(status));
  for (const name in headers) res.writeHeader(name, headers[name]!);
  if (status === 304 || status === 204) {
    res.endWithoutBody();
  } else if (head) {
    // uWS v20.30 aborts on endWithoutBody(length) and would send a body with end() even for
    // HEAD, which breaks keep-alive framing; so the length goes in as a plain header.
    const length = headLength ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    res.writeHeader('Content-Length', String(length));
    res.endWithoutBody();
  } else {
    res.end(body);
  }
}

/** Writes a whole response after an await: one corked write, skipped if the client has gone. */
export function sendResponse(
  res: HttpResponse,
  status: number,
  headers: Headers,
  body: string | Uint8Array,
  head = false,
  headLength?: number,
): void {
  if (isAborted(res)) return;
  res.cork(() => writeResponse(res, status, headers, body, head, headLength));
}

export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Headers = {}, head = false): void {
  const json = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers };
  sendResponse(res, status, json, JSON.stringify(body), head);
}

export interface SendErrorOptions {
  /** Fields for the log line. */
  context?: Record<string, unknown>;
  head?: boolean;
}

/** Maps anything thrown to SPEC 7's body, once; 5xx are logged with their stack, 4xx at debug. */
export function sendError(res: HttpResponse, err: unknown, log: Logger, options: SendErrorOptions = {}): void {
  const { status, body, headers, internal } = toErrorBody(err);
  if (internal) log.error({ ...options.context, err }, 'request.failed');
  else log.debug({ ...options.context, code: body.error.code }, 'request.rejected');
  sendJson(res, status, body, headers, options.head);
}

export interface StreamFileOptions {
  path: string;
  /** First byte to send, inclusive. */
  start: number;
  /** Last byte to send, inclusive. */
  end: number;
  status: number;
  headers: Headers;
  log: Logger;
  highWaterMarkBytes?: number;
}

/**
 * Streams a byte range of a file with backpressure: each chunk goes out with `tryEnd`; when the
 * socket is full the file read pauses, and the unsent tail is retried from `onWritable`. The file
 * is never read whole, and the read stream is destroyed on abort, finish or error.
 */
export function streamFile(res: HttpResponse, options: StreamFileOptions): void {
  const totalSize = options.end - options.start + 1;
  const stream = createReadStream(options.path, {
    start: options.start,
    end: options.end,
    highWaterMark: options.highWaterMarkBytes ?? 256 * 1024,
  });
  let headersSent = false;
  let pending: Buffer | undefined;
  let pendingOffset = 0;

  const stop = (): void => {
    stream.destroy();
  };
  trackAbort(res, stop);

  // Sends a chunk, writing the head first time round; true when the socket took all of it.
  const send = (chunk: Buffer): boolean => {
    let ok = false;
    let done = false;
    res.cork(() => {
      if (!headersSent) {
        res.writeStatus(statusLine(options.status));
        for (const name in options.headers) res.writeHeader(name, options.headers[name]!);
        headersSent = true;
      }
      [ok, done] = res.tryEnd(chunk, totalSize);
    });
    if (done) {
      stop();
      return true;
    }
    return ok;
  };

  stream.on('data', (data) => {
    if (isAborted(res)) return stop();
    const chunk = data as Buffer;
    const offset = res.getWriteOffset();
    if (send(chunk)) return;
    // Socket full: keep what did not go out and wait for the kernel to drain.
    stream.pause();
    pending = chunk;
    pendingOffset = offset;
    res.onWritable((writeOffset) => {
      if (isAborted(res) || !pending) return true;
      // `writeOffset` is how far the body got; the chunk began at `pendingOffset`.
      const ok = send(pending.subarray(writeOffset - pendingOffset));
      if (ok) {
        pending = undefined;
        stream.resume();
      }
      return ok;
    });
  });
  stream.on('error', (err) => {
    options.log.error({ err, path: options.path }, 'serve.stream_failed');
    if (!isAborted(res)) {
      // Headers may already be out; the only honest thing left is to cut the connection.
      res.cork(() => res.close());
    }
  });
}
