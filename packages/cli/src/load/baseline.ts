import type { LoadReport, Summary } from './report.js';

/**
 * `--baseline FILE`: this run against an earlier result, for CI. A regression is throughput down,
 * p99 latency up, or the error share up, each by more than the threshold; any one fails the run.
 * Compared overall and per target that both runs have.
 */
export interface Regression {
  target: string;
  measure: 'requests_per_second' | 'p99_ms' | 'error_percent';
  baseline: number;
  now: number;
}

export interface Thresholds {
  /** Allowed change, in percent, of throughput and p99 latency. */
  percent: number;
  /** Allowed rise of the share of errors, in percentage points. */
  errorPoints: number;
}

const errorPercent = (summary: Summary): number => (summary.requests === 0 ? 0 : (summary.errors.total / summary.requests) * 100);

function compareSummaries(target: string, now: Summary, before: Summary, thresholds: Thresholds): Regression[] {
  const found: Regression[] = [];
  const factor = thresholds.percent / 100;
  if (now.requests_per_second < before.requests_per_second * (1 - factor))
    found.push({ target, measure: 'requests_per_second', baseline: before.requests_per_second, now: now.requests_per_second });
  if (now.latency_ms.p99 > before.latency_ms.p99 * (1 + factor))
    found.push({ target, measure: 'p99_ms', baseline: before.latency_ms.p99, now: now.latency_ms.p99 });
  const nowErrors = errorPercent(now);
  const beforeErrors = errorPercent(before);
  if (nowErrors > beforeErrors + thresholds.errorPoints) found.push({ target, measure: 'error_percent', baseline: beforeErrors, now: nowErrors });
  return found;
}

export function findRegressions(
  now: Pick<LoadReport, 'overall' | 'targets'>,
  before: Pick<LoadReport, 'overall' | 'targets'>,
  thresholds: Thresholds,
): Regression[] {
  const found = compareSummaries('overall', now.overall, before.overall, thresholds);
  for (const target of now.targets) {
    const earlier = before.targets.find((t) => t.target === target.target);
    if (earlier && now.targets.length > 1) found.push(...compareSummaries(target.target, target, earlier, thresholds));
  }
  return found;
}

export function describeRegression(regression: Regression): string {
  const unit = regression.measure === 'requests_per_second' ? ' req/s' : regression.measure === 'p99_ms' ? ' ms' : ' %';
  const round = (n: number): string => String(Math.round(n * 100) / 100);
  return `${regression.target}: ${regression.measure} ${round(regression.baseline)}${unit} → ${round(regression.now)}${unit}`;
}
