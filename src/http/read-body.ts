import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { isAborted, trackAbort } from './abort.js';
import type { BodyMemory } from './body-memory.js';
import type { PacedUpload, UploadPacer } from './upload-pacer.js';
import type { HttpResponse } from './uws.js';

/**
 * Reading request bodies. uWS hands chunks only to an `onData` attached before the handler
 * returns, so both readers must be called synchronously there.
 */

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
  /**
   * Keeps a copy of the body's first bytes, up to this many, in memory as they arrive, for
   * `head`: a form's fields can be checked before its file has arrived. 0 or absent: none.
   */
  keepHeadBytes?: number;
}

/** The body's first bytes so far; `ended` when they are the whole body. */
export interface BodyHead {
  bytes: Buffer;
  ended: boolean;
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
  /**
   * Resolves once at least `minBytes` of the body arrived (or `keepHeadBytes`, or the whole
   * body, whichever is less), with the kept copy of its start; rejects as `done` does when the
   * body fails first. Needs `keepHeadBytes`.
   */
  head(minBytes: number): Promise<BodyHead>;
}

export class SpoolError extends Error {
  /** Set for a refusal that maps straight to SPEC 7 (`too_slow`: 400 bad_request). */
  readonly code?: 'bad_request';
  readonly agentMessage?: string;

  /** `cause` keeps the file system's error (ENOSPC maps to 503 at the edge). */
  constructor(
    readonly reason: 'too_large' | 'too_slow' | 'aborted' | 'io',
    message: string,
    options?: { cause?: unknown },
  ) {
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

/** Where `readBody` puts the bytes as they arrive. */
interface BodySink {
  /** Keeps the chunk (synchronously: uWS neuters it after the callback); throws to refuse. */
  write(bytes: Uint8Array): void;
  /** The whole body arrived. */
  close(): void;
  /** The body is refused, aborted or discarded: frees what it held. Safe to call more than once. */
  remove(): void;
}

/**
 * Streams a request body into a file. Must be called synchronously in the handler (uWS hands
 * body chunks only to an `onData` attached before it returns). Counts bytes as they arrive and
 * stops keeping them at the first byte over `maxBytes`; removes the file when the client aborts
 * or the body is refused. Each chunk is written synchronously straight from uWS's buffer: a
 * page-cache write of one chunk takes microseconds, and it avoids copying every chunk and
 * queueing up to the whole upload in memory when the disk is slower than the network.
 */
export function spoolBody(res: HttpResponse, options: SpoolOptions): Spool {
  return readBody(res, fileSink(options.path), options);
}

function fileSink(path: string): BodySink {
  let fd: number | undefined = openSync(path, 'wx', 0o600);
  const close = (): void => {
    if (fd === undefined) return;
    closeSync(fd);
    fd = undefined;
  };
  return {
    write(bytes) {
      for (let offset = 0; offset < bytes.byteLength;) offset += writeSync(fd!, bytes, offset);
    },
    close,
    remove() {
      close();
      rmSync(path, { force: true });
    },
  };
}

export interface ReceiveOptions extends SpoolOptions {
  /** The request's Content-Length, when it has one (and is not chunked). */
  declaredBytes?: number;
  /** This thread's budget for bodies held in memory; absent: always spool. */
  memory?: BodyMemory;
}

/** A deploy body: in memory (`data`), or in the spool file at the path the caller chose. */
export interface ReceivedBody {
  bytes: number;
  data?: Uint8Array;
}

export interface Upload {
  /** Resolves once the whole body arrived. */
  done: Promise<ReceivedBody>;
  /** True when the body is received into memory: no spool file is ever created. */
  readonly inMemory: boolean;
  /** Stops keeping the body (or, once used, lets go of it): frees its memory or deletes its file. */
  discard(): void;
  /** As `Spool.drain`. */
  drain(): Promise<boolean>;
}

/**
 * Receives a request body into one preallocated buffer when its declared size fits this thread's
 * memory budget, else spools it to `options.path` as `spoolBody` does. Bounds, deadline, pacing,
 * aborts and draining are the same either way; the memory and its reservation are released when
 * the body is refused, aborted or discarded.
 */
export function receiveBody(res: HttpResponse, options: ReceiveOptions): Upload {
  const declared = options.declaredBytes;
  const memory = options.memory;
  if (declared === undefined || memory === undefined || declared > options.maxBytes || !memory.reserve(declared)) {
    memory?.noteSpooled();
    const spool = spoolBody(res, options);
    const done = spool.done.then((bytes) => ({ bytes }));
    done.catch(() => undefined);
    return { done, inMemory: false, discard: spool.discard, drain: spool.drain };
  }
  let buffer: Buffer | undefined = memory.take(declared);
  let held = true;
  let filled = 0;
  let data: Uint8Array | undefined;
  const release = (): void => {
    buffer = undefined;
    if (!held) return;
    held = false;
    memory.release(declared);
  };
  const body = readBody(
    res,
    {
      write(bytes) {
        // uWS frames a body by its Content-Length, so this is a second line of defence.
        if (filled + bytes.byteLength > declared) throw new SpoolError('too_large', `The upload is larger than its Content-Length of ${declared} bytes.`);
        buffer!.set(bytes, filled);
        filled += bytes.byteLength;
      },
      // Only the filled part is ever handed out (the buffer is not zeroed first).
      close: () => void (data = buffer!.subarray(0, filled)),
      remove: release,
    },
    options,
  );
  const done = body.done.then((bytes) => ({ bytes, data: data! }));
  done.catch(() => undefined);
  return {
    done,
    inMemory: true,
    discard() {
      body.discard();
      release();
    },
    drain: body.drain,
  };
}

function readBody(res: HttpResponse, sink: BodySink, options: SpoolOptions): Spool {
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

  const headLimit = options.keepHeadBytes ?? 0;
  const head = Buffer.alloc(headLimit);
  let headFilled = 0;
  let failure: SpoolError | undefined;
  const headWaiters: Array<{ minBytes: number; resolve: (head: BodyHead) => void; reject: (err: SpoolError) => void }> = [];
  const answerHeads = (): void => {
    for (let i = headWaiters.length - 1; i >= 0; i--) {
      const waiter = headWaiters[i]!;
      if (failure !== undefined) waiter.reject(failure);
      else if (ended || headFilled >= Math.min(waiter.minBytes, headLimit)) waiter.resolve({ bytes: Buffer.from(head.subarray(0, headFilled)), ended });
      else continue;
      headWaiters.splice(i, 1);
    }
  };

  const fail = (err: SpoolError): void => {
    if (settled) return;
    settled = true;
    failure = err;
    clearTimeout(deadlineTimer);
    sink.remove();
    rejectDone(err);
    answerHeads();
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
    deadlineTimer = setTimeout(
      () => fail(new SpoolError('too_slow', `The upload did not finish within ${Math.round(deadlineMs / 1000)} seconds.`)),
      deadlineMs,
    );
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
      if (headFilled < headLimit) {
        const start = new Uint8Array(chunk, 0, Math.min(chunk.byteLength, headLimit - headFilled));
        head.set(start, headFilled);
        headFilled += start.byteLength;
      }
      sink.write(new Uint8Array(chunk));
      if (isLast) {
        settled = true;
        clearTimeout(deadlineTimer);
        sink.close();
        resolveDone(received);
        answerHeads();
        return;
      }
      if (headWaiters.length > 0) answerHeads();
      const delay = options.pacer?.delayAfter(paced, chunk.byteLength) ?? 0;
      if (delay > 1) {
        res.pause();
        resumeTimer = setTimeout(() => {
          if (!isAborted(res) && !settled) res.resume();
        }, delay);
      }
    } catch (err) {
      fail(err instanceof SpoolError ? err : new SpoolError('io', (err as Error).message, { cause: err }));
    }
  });

  return {
    done,
    head(minBytes) {
      if (headLimit === 0) return Promise.reject(new Error('head() needs keepHeadBytes'));
      return new Promise<BodyHead>((resolve, reject) => {
        headWaiters.push({ minBytes, resolve, reject });
        answerHeads();
      });
    },
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
