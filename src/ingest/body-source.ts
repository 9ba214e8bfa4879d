// The request body an unpack reads: a spool file, or the bytes the HTTP thread received into
// memory. Every reader goes through these few calls, so both give the same answers.
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';

export type BodySource = { path: string } | { bytes: Buffer };

const READ_CHUNK_BYTES = 256 * 1024;

/** A Buffer over the same memory (structured clone and transfer hand over a plain Uint8Array). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Up to `length` bytes from `position`. */
export async function readAt(source: BodySource, position: number, length: number): Promise<Buffer> {
  if ('bytes' in source) return source.bytes.subarray(position, position + length);
  const handle = await open(source.path, 'r');
  try {
    return await readFrom(handle, position, length);
  } finally {
    await handle.close();
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
  return { readAt: (position, length) => readFrom(handle, position, length), close: () => handle.close() };
}

async function readFrom(handle: Awaited<ReturnType<typeof open>>, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/**
 * The whole body as a stream. Bytes in memory go as one chunk: a tar parser then hands out each
 * entry as a view of it, with no copy.
 */
export function bodyStream(source: BodySource): Readable {
  if ('bytes' in source) return Readable.from([source.bytes], { objectMode: false });
  return createReadStream(source.path, { highWaterMark: READ_CHUNK_BYTES });
}

export async function readBodyText(source: BodySource): Promise<string> {
  return 'bytes' in source ? source.bytes.toString('utf8') : readFile(source.path, 'utf8');
}
