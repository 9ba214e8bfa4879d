import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config.js';
import { createLogger } from '../log.js';
import { startServer } from './server.js';

/** Entry point of one HTTP worker thread: serve until the main thread says stop. */
interface ThreadData {
  config: Config;
  port: number;
  index: number;
  passwordHashSlots: SharedArrayBuffer;
}

/** `stop` starts the graceful stop; `hurry` (a second signal) cuts its grace short. */
type Command = { type: 'stop' } | { type: 'hurry' };

const { config, port, index, passwordHashSlots } = workerData as ThreadData;
const log = createLogger({ level: config.logLevel, base: { thread: index } });

// One request's stray rejection must not take down every connection on this thread.
process.on('unhandledRejection', (err) => log.error({ err }, 'thread.unhandled_rejection'));

try {
  const server = await startServer({ config, log, port, index, passwordHashSlots });
  const hurry = new AbortController();
  parentPort!.postMessage({ type: 'listening', port: server.port });
  parentPort!.on('message', (message: Command) => {
    if (message.type === 'hurry') return hurry.abort();
    if (message.type !== 'stop') return;
    server
      .close({ hurry: hurry.signal })
      .then(
        (finished) => parentPort!.postMessage({ type: 'stopped', finished }),
        (err: unknown) => {
          log.error({ err }, 'thread.close_failed');
          parentPort!.postMessage({ type: 'stopped', finished: false });
        },
      )
      .finally(() => {
        // Nothing is left on this thread's event loop now (every uWS socket is closed), so the
        // thread ends by itself. Terminating it instead would tear the loop down under uWS.
        parentPort!.close();
      });
  });
} catch (err) {
  parentPort!.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
