import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import type { BodyMemory } from './body-memory.js';
import type { BodyLimit, BodySink } from './body-reader.js';

/**
 * The three places a body (or a form's file) can go as it arrives: a list of copied chunks (a
 * small body), one buffer reserved in the thread's body memory (a large body of known size), or
 * a spool file. Not exported from the area: edges get them through `receiveBody`/`receiveForm`.
 */

/** A sink whose bytes, once all there, are in memory (`bytes()`) or in the spool file at `path`. */
export interface HeldSink extends BodySink {
  readonly path?: string;
  /** The bytes written, once the body ended (undefined for a spool file). */
  bytes(): Buffer | undefined;
}

/** A small body: each chunk copied as it comes (uWS neuters it after the callback). */
export function chunkSink(): HeldSink {
  let chunks: Buffer[] = [];
  return {
    write(bytes) {
      chunks.push(Buffer.from(bytes));
      return true;
    },
    end: () => undefined,
    remove() {
      chunks = [];
    },
    bytes: () => Buffer.concat(chunks),
  };
}

/**
 * Room reserved in the thread's body memory for `capacity` bytes (the body's declared length),
 * filled as it arrives; released when the body is removed. Only the filled part is ever handed
 * out (the buffer is not zeroed first). `tooLarge`: past the capacity, which uWS's framing by
 * Content-Length already prevents (a second line of defence).
 */
export function bufferSink(memory: BodyMemory, capacity: number, limit: BodyLimit): HeldSink {
  let buffer: Buffer | undefined = memory.take(capacity);
  let held = true;
  let filled = 0;
  return {
    write(bytes) {
      if (filled + bytes.byteLength > capacity) throw limit.tooLarge();
      buffer!.set(bytes, filled);
      filled += bytes.byteLength;
      return true;
    },
    end: () => undefined,
    remove() {
      buffer = undefined;
      if (!held) return;
      held = false;
      memory.release(capacity);
    },
    bytes: () => buffer?.subarray(0, filled),
  };
}

/**
 * A spool file, created at once (it must not exist). Each chunk is written synchronously straight
 * from uWS's buffer: a page-cache write of one chunk takes microseconds, and it avoids copying
 * every chunk and queueing up to the whole upload in memory when the disk is slower than the
 * network. `remove` deletes the file.
 */
export function fileSink(path: string): HeldSink {
  let fd: number | undefined = openSync(path, 'wx', 0o600);
  const close = (): void => {
    if (fd === undefined) return;
    closeSync(fd);
    fd = undefined;
  };
  return {
    path,
    write(bytes) {
      for (let offset = 0; offset < bytes.byteLength;) offset += writeSync(fd!, bytes, offset);
      return true;
    },
    end: close,
    remove() {
      close();
      rmSync(path, { force: true });
    },
    bytes: () => undefined,
  };
}
