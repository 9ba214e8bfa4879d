import type { Worker } from 'node:worker_threads';
import type { MetricFamily } from './metric-families.js';

/** What an HTTP thread answers the main thread's `report` message with (http-thread.ts). */
export interface ThreadReport {
  /** The thread's metric families when they were asked for (`/metrics`); none for readiness alone. */
  metrics: MetricFamily[];
  /** Why the thread cannot serve, if it cannot. */
  problem?: string;
}

export interface ThreadReports {
  /**
   * Every thread's report, in thread order; undefined for a thread that did not answer within
   * `timeoutMs`. `withMetrics`: the threads build their metric families too (only `/metrics` reads
   * them; readiness, asked every few seconds, needs only the problem).
   */
  ask(timeoutMs: number, withMetrics: boolean): Promise<Array<ThreadReport | undefined>>;
}

/**
 * The main thread's questions to its HTTP threads, over their MessagePorts: prom-client's
 * registries live one per thread, so, as its AggregatorRegistry does for cluster workers, the
 * operator listener asks each thread and sums the answers. A thread too busy to answer in time
 * is reported as such: a wedged thread is a node that cannot serve.
 */
export function createThreadReports(workers: readonly Worker[]): ThreadReports {
  let next = 0;
  const waiting = new Map<number, (report: ThreadReport) => void>();
  for (const worker of workers) {
    worker.on('message', (message: { type?: string; id?: number; report?: ThreadReport }) => {
      if (message.type === 'report' && message.id !== undefined && message.report) waiting.get(message.id)?.(message.report);
    });
  }
  return {
    ask(timeoutMs, withMetrics) {
      return Promise.all(
        workers.map(
          (worker) =>
            new Promise<ThreadReport | undefined>((resolve) => {
              const id = ++next;
              const timer = setTimeout(() => {
                waiting.delete(id);
                resolve(undefined);
              }, timeoutMs);
              timer.unref();
              waiting.set(id, (report) => {
                clearTimeout(timer);
                waiting.delete(id);
                resolve(report);
              });
              worker.postMessage({ type: 'report', id, withMetrics });
            }),
        ),
      );
    },
  };
}
