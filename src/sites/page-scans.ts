// The references of a large site's pages, read while the rest of its body is unpacked. The unpack
// keeps one ingest thread busy and left the other core idle until the analysis, which then read
// every page: now the worker tells of each page and style sheet it stores, another thread reads
// what they refer to meanwhile, and the analysis after the unpack mostly resolves references.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { IngestPool, ScanResult, StoredPage } from '../ingest/index.js';

/**
 * Below this many bytes of pages and style sheets the unpack task checks the links itself (see
 * `linkCheckShares`: under two shares' worth), so nothing is read ahead.
 */
const START_BYTES = 2 * 1024 * 1024;
/** Pages wait until this many bytes are there to be read in one task. */
const BATCH_BYTES = 256 * 1024;

export interface PageScans {
  /** For `UnpackOptions.pages`. */
  port: MessagePort;
  /** Stops listening, waits for the reading under way, and gives what was read (undefined: nothing). */
  finish(): Promise<ScanResult | undefined>;
}

/** One reading task at a time per deploy, on the unpack threads. */
export function startPageScans(ingest: Pick<IngestPool, 'scan'>, dataDir: string, signal?: AbortSignal): PageScans {
  const channel = new MessageChannel();
  let waiting: StoredPage[] = [];
  let waitingBytes = 0;
  let seenBytes = 0;
  let finished = false;
  let running: Promise<void> | undefined;
  const found: ScanResult[] = [];

  function next(): void {
    if (finished || running !== undefined || seenBytes < START_BYTES || waitingBytes < BATCH_BYTES) return;
    const pages = waiting;
    waiting = [];
    waitingBytes = 0;
    // A failed read costs nothing but time: the analysis reads those pages itself.
    running = ingest
      .scan({ dataDir, pages }, signal)
      .then(
        (refs) => void found.push(refs),
        () => undefined,
      )
      .finally(() => {
        running = undefined;
        next();
      });
  }

  channel.port1.on('message', (page: StoredPage) => {
    waiting.push(page);
    waitingBytes += page.size;
    seenBytes += page.size;
    next();
  });

  return {
    port: channel.port2,
    async finish() {
      finished = true;
      channel.port1.close();
      while (running !== undefined) await running;
      if (found.length === 0) return undefined;
      const merged: ScanResult = {};
      for (const refs of found) Object.assign(merged, refs);
      return merged;
    },
  };
}
