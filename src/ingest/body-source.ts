// The request body an unpack reads: a spool file (or a range of one), or the bytes the HTTP thread
// received into memory. Every reader goes through these few calls, so all give the same answers.
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ByteRange } from './types.js';

export type BodySource = { path: string; range?: ByteRange } | { bytes: Buffer };

const READ_CHUNK_BYTES = 256 * 1024;

/** A Buffer over the same memory (structured clone and transfer hand over a plain Uint8Array). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Up to `length` bytes from `position`. */
export async function readAt(source: BodySource, position: number, length: number): Promise<Buffer> {
  const reader = await openBodyReader(source);
  try {
    return await reader.readAt(position, length);
  } finally {
    await reader.close();
  }
}

/** Reads at positions of an open body; `close` when done. */
export interface BodyReader {
  readAt(position: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

export async function openBodyReader(source: BodySource): Promise<BodyReader> {
  if ('bytes' in source) {
    const { bytes } = source;
    return { readAt: async (position, length) => bytes.subarray(position, position + length), close: async () => undefined };
  }
  const handle = await open(source.path, 'r');
  const { start, end } = source.range ?? { start: 0, end: Infinity };
  return {
    readAt: (position, length) => readFrom(handle, start + position, Math.max(0, Math.min(length, end - start - position))),
    close: () => handle.close(),
  };
}

async function readFrom(handle: Awaited<ReturnType<typeof open>>, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/**
 * The whole body as a stream. Bytes in memory go as one chunk to a plain tar parser, which then
 * hands out each entry as a view of it, with no copy. For a decompressor they go in read-sized
 * views instead: given all of a body at once, gunzip would inflate the whole archive ahead of the
 * parser into memory, where a file's chunks keep it paced by what the parser takes.
 */
export function bodyStream(source: BodySource, options: { paced?: boolean } = {}): Readable {
  if (!('bytes' in source)) {
    // createReadStream's `end` is inclusive.
    const range = source.range ? { start: source.range.start, end: source.range.end - 1 } : {};
    return createReadStream(source.path, { highWaterMark: READ_CHUNK_BYTES, ...range });
  }
  const { bytes } = source;
  if (!options.paced) return Readable.from([bytes], { objectMode: false });
  return Readable.from(
    (function* views() {
      for (let offset = 0; offset < bytes.byteLength; offset += READ_CHUNK_BYTES) yield bytes.subarray(offset, offset + READ_CHUNK_BYTES);
    })(),
    { objectMode: false },
  );
}

export async function readBodyText(source: BodySource): Promise<string> {
  if ('bytes' in source) return source.bytes.toString('utf8');
  if (source.range === undefined) return readFile(source.path, 'utf8');
  const { start, end } = source.range;
  return (await readAt(source, 0, end - start)).toString('utf8');
}
