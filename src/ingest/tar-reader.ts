// Streams a .tar or .tar.gz body entry by entry through the collector. Nothing is extracted to
// disk; entry bytes go to memory (bounded by the limits) and then to the blob store.
import { createGunzip } from 'node:zlib';
import tarStream, { type Header } from 'tar-stream';
import { bodyStream, type BodySource } from './body-source.js';
import type { Collector, EntryKind } from './collector.js';
import { damagedArchive, guardArchive } from './damaged.js';
import { emptyArchive, unsupportedFormat } from './format.js';
import { DeployRejected, formatBytes, tooLarge } from './rejection.js';

// Skipped entries (node_modules/, .git/) and tar headers (pax headers may be megabytes each) are
// decompressed too, since a tar stream cannot seek past them. They cannot make the site larger,
// but a gzip bomb hiding in them would cost unbounded time, so the whole decompressed stream is
// capped at the site limit plus this.
export const MAX_EXPANSION_SLACK_BYTES = 1024 * 1024 * 1024;
const GUNZIP_CHUNK_BYTES = 64 * 1024;

function kindOf(type: Header['type'] | null): EntryKind {
  switch (type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'directory';
    case 'symlink':
      return 'symlink';
    case 'link':
      return 'hardlink';
    case 'character-device':
    case 'block-device':
      return 'device';
    case 'fifo':
      return 'fifo';
    default:
      // GNU sparse files, volume labels, multi-volume continuations, unknown type flags.
      return 'other';
  }
}

async function drain(chunks: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of chunks);
}

export async function readTar(body: BodySource, gzipped: boolean, collector: Collector, maxSiteBytes: number): Promise<void> {
  const format = gzipped ? 'tar.gz' : 'tar';
  const source = bodyStream(body, { paced: gzipped });
  const extract = tarStream.extract();
  // Errors of the byte sources are handed to the tar parser, whose iterator then rejects with them.
  const fail = (err: Error): void => void extract.destroy(err);
  source.on('error', fail);
  const gunzip = gzipped ? createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES }) : undefined;
  if (gunzip) {
    const maxExpandedBytes = maxSiteBytes + MAX_EXPANSION_SLACK_BYTES;
    let expandedBytes = 0;
    gunzip.on('error', fail);
    gunzip.on('data', (chunk: Buffer) => {
      expandedBytes += chunk.byteLength;
      if (expandedBytes > maxExpandedBytes) {
        const limit = formatBytes(maxExpandedBytes);
        fail(
          tooLarge(`The archive expands to more than ${limit}.`, {
            agentMessage: `The archive expands to more than ${limit} when decompressed. Deploy only the built site, without dependency folders such as node_modules/.`,
          }),
        );
      }
    });
    source.pipe(gunzip).pipe(extract);
  } else {
    source.pipe(extract);
  }

  let entries = 0;
  const iterator = extract[Symbol.asyncIterator]();
  try {
    while (true) {
      let step: IteratorResult<{ header: Header } & AsyncIterable<unknown>>;
      try {
        step = await iterator.next();
      } catch (err) {
        throw describeTarError(err, gzipped, entries);
      }
      if (step.done) break;
      entries++;
      const entry = step.value;
      const path = collector.admit(entry.header.name, kindOf(entry.header.type));
      const chunks = guardArchive(entry as AsyncIterable<Uint8Array>, format);
      if (path === undefined) await drain(chunks);
      else await collector.addFile(path, chunks);
    }
  } finally {
    source.destroy();
    gunzip?.destroy();
    extract.destroy();
  }
  if (entries === 0) throw emptyArchive();
}

function describeTarError(err: unknown, gzipped: boolean, entries: number): DeployRejected {
  if (err instanceof DeployRejected) return err;
  const reason = err instanceof Error ? err.message : '';
  // tar-stream's words for "the first block is not a tar header" and "ended inside the first block".
  if (gzipped && entries === 0 && (reason.startsWith('Invalid tar header') || reason === 'Unexpected end of data')) {
    return unsupportedFormat('The body is gzip-compressed but does not contain a tar archive.');
  }
  return damagedArchive(gzipped ? 'tar.gz' : 'tar', err);
}
