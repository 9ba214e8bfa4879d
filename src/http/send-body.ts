import { createReadStream } from 'node:fs';
import type { Logger } from '../log.js';
import { isAborted, markFinished, trackAbort } from './abort.js';
import { statusLine, type Headers } from './respond.js';
import type { HttpResponse } from './uws.js';

/** Sending large bodies with backpressure: a buffer held in memory, or a byte range of a file. */

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

const STREAM_CHUNK_BYTES = 1024 * 1024;

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
    // 1 MB reads: a 50 MB file went at 0.80× nginx's sendfile in 256 KB ones, 1.08× in these
    // (bench/RESULTS.md, "Large files"); a slow reader holds one chunk and one read ahead.
    highWaterMark: options.highWaterMarkBytes ?? STREAM_CHUNK_BYTES,
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
