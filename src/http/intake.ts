import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { BodyMemory } from './body-memory.js';
import { readBody, type BodyLimit, type BodyReading, type BodySink } from './body-reader.js';
import { bufferSink, chunkSink, fileSink, type HeldSink } from './body-sinks.js';
import type { UploadPacer } from './upload-pacer.js';
import type { HttpResponse } from './uws.js';

export { IntakeError, type BodyLimit } from './body-reader.js';

/**
 * The one way a request body arrives, on every host: REST, MCP and the app (its forms through
 * `receiveForm`). The limit and its refusals come from the operations (sites/body-limits.ts), so
 * every edge answers a body over the limit, or too slow, in the same words.
 */

export interface IntakeOptions {
  limit: BodyLimit;
  /** The request's Content-Length when it has one and is not chunked (`declaredLength`). */
  declaredBytes?: number;
  /**
   * A body that may be large: into one buffer of the thread's body memory when its declared
   * length fits the budget, else into a new spool file in `dir`. Absent: a small body, kept in
   * memory as it comes (the limit bounds it).
   */
  spool?: { dir: string; memory?: BodyMemory };
  /** Slows intake while the thread is busy serving visitors. */
  pacer?: UploadPacer;
}

/** A whole body: its bytes in memory (`data`), or in the spool file at `spoolPath`. */
export type ReceivedBody = { bytes: number; data: Buffer; spoolPath?: undefined } | { bytes: number; spoolPath: string; data?: undefined };

export interface Intake {
  /**
   * Set at once when the declared length is over the limit (the limit's `tooLarge()`): an edge
   * answers it before anything else, so such a request costs nothing, not even an anonymous cap.
   */
  readonly refused?: Error;
  /** Resolves once the whole body arrived; rejects with the limit's refusal, or an `IntakeError`. */
  done: Promise<ReceivedBody>;
  /** Stops keeping the body, or once used, lets go of it: frees its memory, deletes its spool file. */
  discard(): void;
  /** Before answering an error: see `BodyReading.drain`. */
  drain(): Promise<boolean>;
}

/** A refused body up to this size is read to its end before the answer, so the client sees it (see `drain`). */
const LINGER_MAX_BYTES = 128 * 1024 * 1024;
const LINGER_MS = 10_000;

/** A body's Content-Length, when it has one that frames it (not chunked). */
export function declaredLength(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  const length = headers['content-length']?.trim();
  if (headers['transfer-encoding'] !== undefined || length === undefined || !/^\d{1,15}$/.test(length)) return undefined;
  return Number(length);
}

/** Starts receiving the body. Call it synchronously in the handler: uWS hands chunks only to an `onData` attached at once. */
export function receiveBody(res: HttpResponse, options: IntakeOptions): Intake {
  const { limit, declaredBytes: declared } = options;
  const refused = refusalOf(declared, limit);
  if (refused) return refusedIntake(res, options, refused);
  const sink = sinkFor(options);
  const reading = readBody(res, sink, { limit, pacer: options.pacer });
  return heldIntake(reading, sink);
}

/** Where a body goes: memory for a small one; for a large one, the thread's body memory when it fits, else a spool file. */
export function sinkFor(options: Pick<IntakeOptions, 'declaredBytes' | 'spool' | 'limit'>, capacity = options.declaredBytes): HeldSink {
  if (options.spool === undefined) return chunkSink();
  const { memory, dir } = options.spool;
  if (capacity !== undefined && memory !== undefined && memory.reserve(capacity)) return bufferSink(memory, capacity, options.limit);
  memory?.noteSpooled();
  return fileSink(join(dir, `${randomUUID()}.upload`));
}

/** The limit's refusal for a body declared larger than it allows. */
export function refusalOf(declared: number | undefined, limit: BodyLimit): Error | undefined {
  return declared !== undefined && declared > limit.maxBytes ? limit.tooLarge() : undefined;
}

/** Reads nothing of a body refused for its declared length; its drain reads it to its end when that is not too much. */
export function refusedIntake(res: HttpResponse, options: IntakeOptions, refused: Error): Intake & { refused: Error } {
  const nothing: BodySink = { write: () => true, end: () => undefined, remove: () => undefined };
  const declared = options.declaredBytes ?? 0;
  const reading = readBody(res, nothing, { ...options, refused, drain: { bytes: declared <= LINGER_MAX_BYTES ? declared : 0, ms: LINGER_MS } });
  const done = reading.done.then((): ReceivedBody => {
    throw refused;
  });
  done.catch(() => undefined);
  return { refused, done, discard: reading.discard, drain: reading.drain };
}

function heldIntake(reading: BodyReading, sink: HeldSink): Intake {
  const done = reading.done.then((bytes): ReceivedBody => {
    const data = sink.bytes();
    return data !== undefined ? { bytes, data } : { bytes, spoolPath: sink.path! };
  });
  done.catch(() => undefined);
  return {
    done,
    discard() {
      reading.discard();
      sink.remove();
    },
    drain: reading.drain,
  };
}
