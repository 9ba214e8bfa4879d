import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.js';
import { createLogger } from './log.js';
import { startServer } from './server.js';

/** Entry point of one HTTP worker thread: serve until the main thread says stop. */
interface ThreadData {
  config: Config;
  port: number;
  index: number;
}

const { config, port, index } = workerData as ThreadData;
const log = createLogger({ level: config.logLevel, base: { thread: index } });

// One request's stray rejection must not take down every connection on this thread.
process.on('unhandledRejection', (err) => log.error({ err }, 'thread.unhandled_rejection'));

try {
  const server = await startServer({ config, log, port });
  parentPort!.postMessage({ type: 'listening', port: server.port });
  parentPort!.on('message', (message: { type: string }) => {
    if (message.type !== 'stop') return;
    server.close().then(
      () => parentPort!.postMessage({ type: 'stopped' }),
      (err: unknown) => {
        log.error({ err }, 'thread.close_failed');
        parentPort!.postMessage({ type: 'stopped' });
      },
    );
  });
} catch (err) {
  parentPort!.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
