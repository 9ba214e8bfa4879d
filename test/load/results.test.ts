import { describe, expect, it } from 'vitest';
import { findRegressions, type Thresholds } from '../../packages/cli/src/load/baseline.js';
import { emptyHistogram, merge, percentilesMs, quantile, record } from '../../packages/cli/src/load/histogram.js';
import type { Summary } from '../../packages/cli/src/load/report.js';

/** The numbers a run reports: latency percentiles from the histogram, and the baseline comparison for CI. */

describe('the latency histogram', () => {
  it.each([
    [0.5, 5_000],
    [0.9, 9_000],
    [0.99, 9_900],
    [0.999, 9_990],
  ])('puts quantile %d of 1…10 000 µs within 1 %% of %i µs', (q, expected) => {
    const histogram = emptyHistogram();
    for (let us = 1; us <= 10_000; us++) record(histogram, us);
    expect(Math.abs(quantile(histogram, q) - expected) / expected).toBeLessThanOrEqual(0.01);
  });

  it('adds up what several threads counted', () => {
    const a = emptyHistogram();
    const b = emptyHistogram();
    for (let i = 0; i < 900; i++) record(a, 1_000);
    for (let i = 0; i < 100; i++) record(b, 250_000);
    const both = merge(merge(emptyHistogram(), a), b);
    expect(both.count).toBe(1000);
    expect(percentilesMs(both)).toEqual({ p50: expect.closeTo(1, 1), p90: expect.closeTo(1, 1), p99: 250, 'p99.9': 250, max: 250 });
  });

  it('reports zeros for no requests', () => {
    expect(percentilesMs(emptyHistogram())).toEqual({ p50: 0, p90: 0, p99: 0, 'p99.9': 0, max: 0 });
  });
});

describe('the baseline comparison', () => {
  const summary = (rps: number, p99: number, errors: number, requests = 10_000): Summary => ({
    requests,
    requests_per_second: rps,
    bytes: 0,
    bytes_per_second: 0,
    latency_ms: { p50: p99 / 4, p90: p99 / 2, p99, 'p99.9': p99 * 2, max: p99 * 3 },
    by_kind: {} as Summary['by_kind'],
    statuses: {},
    errors: { total: errors, by_kind: { status: errors, wrong_body: 0, wrong_type: 0, connection: 0, timeout: 0 }, by_status: {} },
    checked_bodies: 0,
    revalidations: { sent: 0, not_modified: 0 },
  });
  const run = (rps: number, p99: number, errors = 0) => ({ overall: summary(rps, p99, errors), targets: [{ target: 'a:1', ...summary(rps, p99, errors) }] });
  const thresholds: Thresholds = { percent: 10, errorPoints: 1 };

  it.each([
    ['the same figures', run(1000, 10), run(1000, 10), []],
    ['throughput down 5 %', run(950, 10), run(1000, 10), []],
    ['throughput down 20 %', run(800, 10), run(1000, 10), ['requests_per_second']],
    ['throughput up', run(2000, 10), run(1000, 10), []],
    ['p99 up 5 %', run(1000, 10.5), run(1000, 10), []],
    ['p99 up 50 %', run(1000, 15), run(1000, 10), ['p99_ms']],
    ['p99 down', run(1000, 5), run(1000, 10), []],
    ['errors up 0.5 points', run(1000, 10, 50), run(1000, 10, 0), []],
    ['errors up 2 points', run(1000, 10, 200), run(1000, 10, 0), ['error_percent']],
    ['everything worse', run(100, 100, 5000), run(1000, 10, 0), ['requests_per_second', 'p99_ms', 'error_percent']],
  ])('%s: %j', (_name, now, before, measures) => {
    expect(findRegressions(now, before, thresholds).map((r) => r.measure)).toEqual(measures);
  });

  it('compares each target both runs had, when there are several', () => {
    const now = {
      overall: summary(1000, 10, 0),
      targets: [
        { target: 'a:1', ...summary(500, 10, 0) },
        { target: 'b:2', ...summary(500, 30, 0) },
      ],
    };
    const before = {
      overall: summary(1000, 10, 0),
      targets: [
        { target: 'a:1', ...summary(500, 10, 0) },
        { target: 'b:2', ...summary(500, 10, 0) },
      ],
    };
    expect(findRegressions(now, before, thresholds)).toEqual([{ target: 'b:2', measure: 'p99_ms', baseline: 10, now: 30 }]);
  });
});
