import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { counter } from '../../src/runtime/metric-families.js';
import { createNodeHealth } from '../../src/runtime/node-health.js';
import type { ThreadReport, ThreadReports } from '../../src/runtime/thread-reports.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Readiness is asked every few seconds (the watch, a load balancer's probes), /metrics once a
 * scrape: only /metrics has the HTTP threads build their metric families, and /metrics never
 * takes a gathering made for readiness alone.
 */

const OPS = { port: 0, host: '127.0.0.1', metrics: true, accessLog: false, minFreeBytes: 0, maxReplicaLagMs: 0 };

/** Threads that answer at once, as an HTTP thread does: its families only when asked for them. */
function recordedThreads(): ThreadReports & { asks: boolean[] } {
  const asks: boolean[] = [];
  return {
    asks,
    ask(_timeoutMs, withMetrics) {
      asks.push(withMetrics);
      const report: ThreadReport = {
        metrics: withMetrics ? [counter('plinth_http_requests_total', 'Requests.', [{ value: 7, labels: { host_kind: 'site', status: '2xx' } }])] : [],
      };
      return Promise.resolve([report]);
    },
  };
}

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function healthOf(threads: ThreadReports) {
  const dataDir = tempDir('plinth-health-');
  mkdirSync(join(dataDir, 'tmp'));
  store = openStore({ dir: dataDir });
  return createNodeHealth({ config: OPS, dataDir, store, threads, isStopping: () => false, log: createLogger({ level: 'silent' }) });
}

describe('node health', () => {
  it('asks the threads for their metrics only for /metrics', async () => {
    const threads = recordedThreads();
    const health = healthOf(threads);
    expect((await health.readiness()).ready).toBe(true);
    expect(threads.asks).toEqual([false]);
    const text = (await health.metrics())!.text;
    expect(threads.asks).toEqual([false, true]);
    expect(text).toContain('plinth_http_requests_total{host_kind="site",status="2xx"} 7');
    expect(text).toContain('plinth_ready 1');
  });

  it('does not answer /metrics from a gathering made for readiness, even one in flight', async () => {
    const threads = recordedThreads();
    const health = healthOf(threads);
    const [ready, metrics] = await Promise.all([health.readiness(), health.metrics()]);
    expect(ready.ready).toBe(true);
    expect(metrics!.text).toContain('plinth_http_requests_total{host_kind="site",status="2xx"} 7');
    expect(threads.asks).toEqual([false, true]);
  });

  it('answers readiness from a fresh gathering made for /metrics', async () => {
    const threads = recordedThreads();
    const health = healthOf(threads);
    await health.metrics();
    expect((await health.readiness()).ready).toBe(true);
    expect(threads.asks).toEqual([true]);
  });
});
