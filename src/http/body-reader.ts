import { isErrorCode } from '../errors.js';
import { trackAbort } from './abort.js';
import type { PacedUpload, UploadPacer } from './upload-pacer.js';
import type { HttpResponse } from './uws.js';

/**
 * The one loop that reads a request body from uWS: counts bytes against the limit, bounds the
 * whole body by a deadline, paces intake while the thread serves visitors, pauses while the
 * sink is full, and when the answer comes before the body has all arrived, reads on for a
 * little so that the client sees it. Where the bytes go is the sink's business (intake.ts,
 * form-intake.ts); this module is not exported from the area.
 */

/** A limit a request body is held to, with the refusals the operations word (sites/body-limits.ts). */
export interface BodyLimit {
  /** More bytes than this, declared or arrived, are refused with `tooLarge()`. */
  readonly maxBytes: number;
  /**
   * The whole body must have arrived within this long, else `tooSlow()`. uWS already cuts a body
   * slower than 16 KB/s after 10 s; this bounds a trickle just above that, which could otherwise
   * hold a connection and a spool file for hours. 0: no bound.
   */
  readonly deadlineMs: number;
  /**
   * While a refused body is drained, a client that sends nothing for this long is not sending it
   * (`PLINTH_LINGER_IDLE_MS`); default 1 s.
   */
  readonly lingerIdleMs?: number;
  tooLarge(): Error;
  tooSlow(): Error;
}

/** A body that stopped for a reason no limit words: the client went, the edge let go, a disk failed. */
export class IntakeError extends Error {
  /** `cause` keeps the file system's error (ENOSPC maps to 503 at the edge). */
  constructor(
    readonly reason: 'aborted' | 'discarded' | 'io',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where the reader puts the bytes as they arrive. */
export interface BodySink {
  /**
   * Takes the chunk now: uWS neuters it after the callback, so a sink copies what it keeps.
   * Throws to refuse the body; false when full: the reader pauses until `room()` is called.
   */
  write(bytes: Uint8Array): boolean;
  /** The whole body arrived; resolves once the sink holds all of it (a parser may lag a little). */
  end(): void | Promise<void>;
  /** The body is refused, aborted or discarded: frees what it holds. Safe to call more than once. */
  remove(): void;
}

export interface ReadOptions {
  limit: BodyLimit;
  pacer?: UploadPacer;
  /** Refused before a byte is kept (a declared length over the limit): read on only to drain. */
  refused?: Error;
  /** How much of a refused body `drain` reads on; default 16 MB within 2 s. */
  drain?: { bytes: number; ms: number };
}

export interface BodyReading {
  /** Resolves with the byte count once the whole body is in the sink. */
  done: Promise<number>;
  /** Fails the body from outside (a parser's error that came later); no effect once settled. */
  fail(err: Error): void;
  /** The sink has room again after `write` returned false. */
  room(): void;
  /** Stops keeping the body; `done` rejects. Safe to call more than once. */
  discard(): void;
  /**
   * Before answering while the body may still be arriving: stops keeping it and reads on for a
   * little, like nginx's lingering close. Closing a socket that still has unread data makes the
   * kernel reset the connection, and the reset can destroy the answer before the client reads
   * it. Resolves true when the client finished sending (the connection can stay open), false
   * when it should be closed.
   */
  drain(): Promise<boolean>;
  /** Bytes arrived so far. */
  received(): number;
}

const DRAIN = { bytes: 16 * 1024 * 1024, ms: 2000 };
/** A client that sends nothing for this long while its refused body is drained is not sending it (unless the limit says). */
const DRAIN_IDLE_MS = 1000;

/** Reads the body into `sink`. Must be called synchronously in the handler (uWS hands chunks only to an `onData` attached at once). */
export function readBody(res: HttpResponse, sink: BodySink, options: ReadOptions): BodyReading {
  const { limit } = options;
  const drainBounds = options.drain ?? DRAIN;
  let received = 0;
  // No longer keeping bytes: refused, failed, discarded, or all arrived.
  let stopped = false;
  let settled = false;
  let ended = false;
  let aborted = false;
  let pacing = false;
  let full = false;
  // uWS's resume() on a socket that was not paused leaves a keep-alive connection that reads no
  // further request: resume only what this reader paused.
  let paused = false;
  let discarded = 0;
  let drained: ((finished: boolean) => void) | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let resumeTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let resolveDone!: (bytes: number) => void;
  let rejectDone!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // Edges may discard before awaiting; never let that surface as an unhandled rejection.
  done.catch(() => undefined);

  const fail = (err: Error): void => {
    stopped = true;
    clearTimeout(deadlineTimer);
    if (settled) return;
    settled = true;
    sink.remove();
    rejectDone(err);
  };
  const finishDrain = (finished: boolean): void => {
    clearTimeout(drainTimer);
    clearTimeout(idleTimer);
    drained?.(finished);
    drained = undefined;
  };
  const pause = (): void => {
    if (paused) return;
    paused = true;
    res.pause();
  };
  const resume = (): void => {
    if (!paused) return;
    paused = false;
    res.resume();
  };
  const resumeIfFree = (): void => {
    if (!aborted && !stopped && !pacing && !full) resume();
  };

  trackAbort(res, () => {
    aborted = true;
    clearTimeout(resumeTimer);
    finishDrain(false);
    fail(new IntakeError('aborted', 'The client closed the connection before the body arrived.'));
  });
  if (options.refused) fail(options.refused);
  else if (limit.deadlineMs > 0) deadlineTimer = setTimeout(() => fail(limit.tooSlow()), limit.deadlineMs);

  const paced: PacedUpload = { due: 0 };
  res.onData((chunk, isLast) => {
    if (isLast) ended = true;
    if (stopped) {
      // Refused, discarded, or arrived: drop the rest, and let a pending drain answer.
      discarded += chunk.byteLength;
      if (drained === undefined) return;
      if (isLast) finishDrain(true);
      else if (discarded > drainBounds.bytes) finishDrain(false);
      else idleTimer?.refresh();
      return;
    }
    received += chunk.byteLength;
    if (received > limit.maxBytes) return fail(limit.tooLarge());
    try {
      const roomLeft = sink.write(new Uint8Array(chunk));
      if (isLast) {
        stopped = true;
        clearTimeout(deadlineTimer);
        Promise.resolve(sink.end()).then(
          () => {
            if (settled) return;
            settled = true;
            resolveDone(received);
          },
          (err: unknown) => fail(asIntakeError(err)),
        );
        return;
      }
      full = !roomLeft;
      const delay = options.pacer?.delayAfter(paced, chunk.byteLength) ?? 0;
      if (delay > 1) {
        pacing = true;
        resumeTimer = setTimeout(() => {
          pacing = false;
          resumeIfFree();
        }, delay);
      }
      if (pacing || full) pause();
    } catch (err) {
      fail(asIntakeError(err));
    }
  });

  return {
    done,
    fail,
    room() {
      full = false;
      resumeIfFree();
    },
    received: () => received,
    discard: () => fail(new IntakeError('discarded', 'The body was discarded.')),
    drain() {
      fail(new IntakeError('discarded', 'The body was discarded.'));
      if (ended) return Promise.resolve(true);
      if (aborted || drainBounds.bytes <= 0) return Promise.resolve(false);
      clearTimeout(resumeTimer);
      resume();
      return new Promise<boolean>((resolve) => {
        drained = resolve;
        drainTimer = setTimeout(() => finishDrain(false), drainBounds.ms);
        idleTimer = setTimeout(() => finishDrain(false), limit.lingerIdleMs ?? DRAIN_IDLE_MS);
      });
    },
  };
}

/** A sink's own refusal (a `ServiceError`: a limit's, a malformed form) passes as it is; anything else is an I/O fault. */
function asIntakeError(err: unknown): Error {
  if (err instanceof Error && isErrorCode((err as { code?: unknown }).code)) return err;
  return new IntakeError('io', (err as Error | undefined)?.message ?? String(err), { cause: err });
}
