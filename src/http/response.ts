import { closeSync, createReadStream, openSync, rmSync, writeSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { toErrorBody } from '../errors.js';
import type { Logger } from '../log.js';
import type { PacedUpload, UploadPacer } from './upload-pacer.js';
import type { HttpRequest, HttpResponse } from './uws.js';

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
  /** Answered in full, or aborted: nothing more will be written. */
  plinthFinished?: boolean;
  /** The set of a server's unanswered responses this one sits in (see `holdIfUnfinished`). */
  plinthPending?: Set<HttpResponse>;
}

/** For writers of their own (event streams): nothing more will be written, a stop need not wait. */
export function markFinished(res: HttpResponse): void {
  const tracked = res as TrackedResponse;
  tracked.plinthFinished = true;
  tracked.plinthPending?.delete(res);
}

/**
 * Called after a handler returned: a response it left unanswered (one that called `trackAbort`)
 * joins `pending` until it is answered or aborted, so a graceful stop can wait for it.
 */
export function holdIfUnfinished(res: HttpResponse, pending: Set<HttpResponse>): void {
  const tracked = res as TrackedResponse;
  if (tracked.plinthOnAbort === undefined || tracked.plinthFinished) return;
  tracked.plinthPending = pending;
  pending.add(res);
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
    markFinished(res);
    for (const hook of tracked.plinthOnAbort ?? []) hook();
  });
}

export function isAborted(res: HttpResponse): boolean {
  return (res as TrackedResponse).plinthAborted === true;
}

export type Headers = Record<string, string>;

/** A request's headers (lower-case names) and the peer's address, copied out of uWS before any await. */
export function copyRequestBasics(res: HttpResponse, req: HttpRequest): { headers: Headers; remoteAddress: string } {
  const headers: Headers = {};
  req.forEach((name, value) => {
    headers[name] = value;
  });
  return { headers, remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString() };
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

export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Headers = {}, options: WriteOptions = {}): void {
  const json = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers };
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

/**
 * In-memory bodies up to this size go to the kernel in one `send`, as far as the socket takes it.
 * Larger ones go out one slice per event-loop turn: handed over whole (up to 4 MB per socket on
 * loopback), they would keep the other connections waiting and leave megabytes queued in socket
 * buffers, gone cold in the CPU caches by the time the client reads them. With 64 connections
 * fetching a 5 MB file, 64 KB slices served 20% more requests than 1 MB slices, with fewer
 * stragglers; smaller slices for a 200 KB body cost 15–25% (more turns per response).
 */
const MEMORY_WHOLE_MAX_BYTES = 1024 * 1024;
const MEMORY_SLICE_BYTES = 64 * 1024;

/**
 * Ends a response with a body held in memory (a cached file) without letting uWS copy it: `end`
 * would buffer whatever the socket does not take at once, a copy per slow client; `tryEnd` sends
 * what fits, and the rest goes from `onWritable` out of the same buffer. Call it from the
 * request handler, after the status and headers are written.
 */
export function endFromMemory(res: HttpResponse, body: Buffer): void {
  const total = body.byteLength;
  const start = res.getWriteOffset();
  const slice = total <= MEMORY_WHOLE_MAX_BYTES ? total : MEMORY_SLICE_BYTES;
  let finished = false;
  // Sends the next slice from `sent` bytes in; true when the socket took all of it.
  const sendFrom = (sent: number): boolean => {
    const [ok, done] = res.tryEnd(total - sent > slice ? body.subarray(sent, sent + slice) : body.subarray(sent), total);
    if (done) {
      finished = true;
      markFinished(res);
    } else if (ok) {
      // All of the slice went out and no writable event will come: continue next turn.
      setImmediate(nextTurn);
    }
    return ok;
  };
  const nextTurn = (): void => {
    if (finished || isAborted(res)) return;
    res.cork(() => void sendFrom(res.getWriteOffset() - start));
  };

  sendFrom(0);
  if (finished) return;
  trackAbort(res);
  res.onWritable((offset) => {
    if (finished || isAborted(res)) return true;
    let ok = false;
    res.cork(() => {
      ok = sendFrom(offset - start);
    });
    return ok;
  });
}

/** A small request body being collected in memory. */
export interface CollectedBody {
  /** The whole body; rejects with `tooLarge()` once more than `maxBytes` arrived. */
  done: Promise<Buffer>;
  /** True once the client finished sending (the connection can be kept). */
  finished(): boolean;
  /** Stops keeping chunks; the rest of the body is read and dropped. */
  discard(): void;
}

/**
 * Collects a small body (JSON, forms, MCP messages). Must be attached synchronously in the
 * handler: uWS hands chunks only to an `onData` attached at once. Past the cap the rest is
 * drained and dropped, so the connection stays usable.
 */
export function collectBody(res: HttpResponse, maxBytes: number, tooLarge: () => Error): CollectedBody {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  let dropped = false;
  const done = new Promise<Buffer>((resolve, reject) => {
    res.onData((chunk, isLast) => {
      if (isLast) finished = true;
      if (dropped) return;
      received += chunk.byteLength;
      if (received > maxBytes) {
        dropped = true;
        reject(tooLarge());
        return;
      }
      // uWS neuters the chunk after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(Buffer.concat(chunks));
    });
  });
  // The caller may fail before awaiting the body; never an unhandled rejection.
  done.catch(() => undefined);
  return {
    done,
    finished: () => finished,
    discard: () => {
      dropped = true;
    },
  };
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
      markFinished(res);
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

export interface SpoolOptions {
  /** File to create (must not exist). */
  path: string;
  maxBytes: number;
  /** Slows intake while the thread is busy serving visitors. */
  pacer?: UploadPacer;
  /**
   * The whole body must have arrived within this long, else it is refused (400). uWS already cuts
   * a body slower than 16 KB/s after 10 s; this bounds a trickle just above that, which could
   * otherwise hold a connection and a spool file for hours. 0 or absent: no bound.
   */
  deadlineMs?: number;
}

export interface Spool {
  /** Resolves with the byte count once the whole body is on disk. */
  done: Promise<number>;
  /** Stops keeping the body and deletes the file; `done` then rejects. Safe to call more than once. */
  discard(): void;
  /**
   * Before answering an error while the body may still be arriving: stops keeping it and reads
   * on for a little (up to 16 MB or 2 s), like nginx's lingering close. Resolves true when the
   * client finished sending (the connection can stay open), false when it should be closed.
   */
  drain(): Promise<boolean>;
}

export class SpoolError extends Error {
  /** Set for a refusal that maps straight to SPEC 7 (`too_slow`: 400 bad_request). */
  readonly code?: 'bad_request';
  readonly agentMessage?: string;

  /** `cause` keeps the file system's error (ENOSPC maps to 503 at the edge). */
  constructor(readonly reason: 'too_large' | 'too_slow' | 'aborted' | 'io', message: string, options?: { cause?: unknown }) {
    super(message, options);
    if (reason === 'too_slow') {
      this.code = 'bad_request';
      this.agentMessage =
        'The upload arrived too slowly and was stopped, so nothing was published. Send it again over a faster connection, or publish a large site in parts: a first deploy, then patch deploys (JSON with "patch": true).';
    }
  }
}

// Closing a socket that still has unread data makes the kernel reset the connection, and the
// reset can destroy the error response before the client reads it; so the rest of a refused body
// is read and dropped for a while first. Past these bounds the client is not stopping.
const DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 2000;

/**
 * Streams a request body into a file. Must be called synchronously in the handler (uWS hands
 * body chunks only to an `onData` attached before it returns). Counts bytes as they arrive and
 * stops keeping them at the first byte over `maxBytes`; removes the file when the client aborts
 * or the body is refused. Each chunk is written synchronously straight from uWS's buffer: a
 * page-cache write of one chunk takes microseconds, and it avoids copying every chunk and
 * queueing up to the whole upload in memory when the disk is slower than the network.
 */
export function spoolBody(res: HttpResponse, options: SpoolOptions): Spool {
  let fd: number | undefined = openSync(options.path, 'wx', 0o600);
  let received = 0;
  let settled = false;
  let ended = false;
  let aborted = false;
  let discarded = 0;
  let drained: ((finished: boolean) => void) | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let resumeTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let resolveDone!: (bytes: number) => void;
  let rejectDone!: (err: SpoolError) => void;
  const done = new Promise<number>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // Callers may discard before awaiting; never let that surface as an unhandled rejection.
  done.catch(() => undefined);

  const closeFile = (): void => {
    if (fd === undefined) return;
    closeSync(fd);
    fd = undefined;
  };
  const fail = (err: SpoolError): void => {
    if (settled) return;
    settled = true;
    clearTimeout(deadlineTimer);
    closeFile();
    rmSync(options.path, { force: true });
    rejectDone(err);
  };
  const finishDrain = (finished: boolean): void => {
    clearTimeout(drainTimer);
    drained?.(finished);
    drained = undefined;
  };

  trackAbort(res, () => {
    aborted = true;
    clearTimeout(resumeTimer);
    finishDrain(false);
    fail(new SpoolError('aborted', 'The client closed the connection before the upload finished.'));
  });
  const paced: PacedUpload = { due: 0 };
  const deadlineMs = options.deadlineMs ?? 0;
  if (deadlineMs > 0) {
    deadlineTimer = setTimeout(() => fail(new SpoolError('too_slow', `The upload did not finish within ${Math.round(deadlineMs / 1000)} seconds.`)), deadlineMs);
  }

  res.onData((chunk, isLast) => {
    if (isLast) ended = true;
    if (settled) {
      // Refused or discarded: drop the rest, and let a pending drain answer.
      discarded += chunk.byteLength;
      if (isLast) finishDrain(true);
      else if (discarded > DRAIN_BYTES) finishDrain(false);
      return;
    }
    received += chunk.byteLength;
    if (received > options.maxBytes) {
      fail(new SpoolError('too_large', `The upload is larger than ${options.maxBytes} bytes.`));
      return;
    }
    try {
      const bytes = new Uint8Array(chunk);
      for (let offset = 0; offset < bytes.byteLength; ) offset += writeSync(fd!, bytes, offset);
      if (isLast) {
        settled = true;
        clearTimeout(deadlineTimer);
        closeFile();
        resolveDone(received);
        return;
      }
      const delay = options.pacer?.delayAfter(paced, chunk.byteLength) ?? 0;
      if (delay > 1) {
        res.pause();
        resumeTimer = setTimeout(() => {
          if (!isAborted(res) && !settled) res.resume();
        }, delay);
      }
    } catch (err) {
      fail(new SpoolError('io', (err as Error).message, { cause: err }));
    }
  });

  return {
    done,
    discard: () => fail(new SpoolError('aborted', 'The upload was discarded.')),
    drain() {
      fail(new SpoolError('aborted', 'The upload was discarded.'));
      if (ended) return Promise.resolve(true);
      if (aborted) return Promise.resolve(false);
      clearTimeout(resumeTimer);
      res.resume();
      return new Promise<boolean>((resolve) => {
        drained = resolve;
        drainTimer = setTimeout(() => finishDrain(false), DRAIN_MS);
      });
    },
  };
}
