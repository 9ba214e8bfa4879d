import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { ProcessSlots } from '../rules/index.js';
import { createLogger } from '../log.js';
import { startServer } from './server.js';
import { batchedLines } from './access-log.js';
import type { ThreadReport } from './thread-reports.js';

/** Entry point of one HTTP worker thread: serve until the main thread says stop. */
interface ThreadData {
  config: Config;
  port: number;
  index: number;
  slots: ProcessSlots;
}

/**
 * `stop` starts the graceful stop; `hurry` (a second signal) cuts its grace short; `report` asks
 * for this thread's metrics and whether it can serve (the operator listener, see thread-reports.ts).
 */
type Command = { type: 'stop' } | { type: 'hurry' } | { type: 'report'; id: number; withMetrics: boolean };

const { config, port, index, slots } = workerData as ThreadData;
const log = createLogger({ level: config.logLevel, base: { thread: index } });

// One request's stray rejection must not take down every connection on this thread.
process.on('unhandledRejection', (err) => log.error({ err }, 'thread.unhandled_rejection'));

try {
  // The access log is its own switch: its lines are written whatever PLINTH_LOG_LEVEL says.
  const accessLog = config.ops.accessLog
    ? createLogger({ level: 'info', base: { thread: index }, write: batchedLines((text) => process.stdout.write(text)) })
    : undefined;
  const server = await startServer({ config, log, port, index, slots, accessLog });
  const hurry = new AbortController();
  parentPort!.postMessage({ type: 'listening', port: server.port });
  parentPort!.on('message', (message: Command) => {
    if (message.type === 'hurry') return hurry.abort();
    if (message.type === 'report') {
      // The metric families only for /metrics: readiness asks every few seconds and reads the problem alone.
      const report: ThreadReport = { metrics: message.withMetrics ? server.metrics() : [], problem: server.problem() };
      return parentPort!.postMessage({ type: 'report', id: message.id, report });
    }
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
