// How an ingest task asks the pool's thread to sync the blob filesystem: the pool keeps the sync
// helper (store/filesystem-sync.ts), which must be started and reaped by a thread that outlives
// Piscina's threads, and hands each unpack and compress task one end of a channel to it.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { RunSync } from '../store/blobs-entry.js';

interface SyncRequest {
  id: number;
  dir: string;
}

interface SyncAnswer {
  id: number;
  error?: string;
}

/**
 * The pool's side for one task: `port` goes to the task (transferred), `close` once the task has
 * ended. Every request is run by `run` and answered on the port.
 */
export function openSyncPort(run: RunSync): { port: MessagePort; close: () => void } {
  const { port1, port2 } = new MessageChannel();
  port1.on('message', ({ id, dir }: SyncRequest) => {
    run(dir).then(
      () => port1.postMessage({ id } satisfies SyncAnswer),
      (err: unknown) => port1.postMessage({ id, error: (err as Error).message } satisfies SyncAnswer),
    );
  });
  return { port: port2, close: () => port1.close() };
}

/** The task's side: a `RunSync` that asks over `port`. */
export function syncOverPort(port: MessagePort): RunSync {
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let lastId = 0;
  port.on('message', ({ id, error }: SyncAnswer) => {
    const waiter = waiting.get(id);
    waiting.delete(id);
    if (waiting.size === 0) port.unref();
    if (error === undefined) waiter?.resolve();
    else waiter?.reject(new Error(error));
  });
  port.on('close', () => {
    for (const waiter of waiting.values()) waiter.reject(new Error('the pool closed the sync channel'));
    waiting.clear();
  });
  port.unref();
  return (dir) =>
    new Promise<void>((resolve, reject) => {
      const id = ++lastId;
      waiting.set(id, { resolve, reject });
      port.ref();
      port.postMessage({ id, dir } satisfies SyncRequest);
    });
}
