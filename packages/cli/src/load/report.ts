import type { DeployEvent } from './deploys.js';
import type { RoundResult, RunResult, ThreadResult } from './engine.js';
import { percentilesMs, type Percentiles } from './histogram.js';
import { REQUEST_KINDS, type RequestKind } from './mix.js';
import { errorCount, type ErrorKind, type Tally } from './tally.js';

/**
 * The result of a run as JSON (`--json`), the shape scripts and `--baseline` read. Names are part
 * of the contract: per target and overall `requests`, `requests_per_second`, `latency_ms` (p50,
 * p90, p99, p99.9, max), `errors` by kind (`wrong_body` among them); `generator.threads`; `rounds`
 * in the order they ran.
 */
export interface Summary {
  requests: number;
  requests_per_second: number;
  bytes: number;
  bytes_per_second: number;
  latency_ms: Percentiles;
  by_kind: Record<RequestKind, { requests: number; latency_ms: Percentiles }>;
  statuses: Record<string, number>;
  errors: { total: number; by_kind: Record<ErrorKind, number>; by_status: Record<string, number> };
  checked_bodies: number;
  revalidations: { sent: number; not_modified: number };
}

export interface LoadReport {
  format: 'plinth-load-result';
  version: 1;
  started_at: string;
  duration_s: number;
  mode: 'open' | 'closed';
  rate?: number;
  connections?: number;
  sites: number;
  generator: {
    threads: number;
    cores: number;
    /** CPU the generator process used, as a share of all cores (0–100). */
    cpu_percent: number;
    per_thread: ThreadResult[];
    /** True when the generator, not the target, was likely the limit. */
    bottleneck: boolean;
    note?: string;
  };
  overall: Summary;
  targets: Array<{ target: string } & Summary>;
  rounds: RoundResult[];
  deploys: { count: number; failed: number; deploy_ms: Percentiles; visible_ms: Percentiles; events: DeployEvent[] };
  timeline: Array<{ second: number; target: string; requests: number; errors: number; bytes: number; latency_ms: Percentiles }>;
}

export function summarise(tally: Tally, seconds: number): Summary {
  const per = (n: number): number => (seconds > 0 ? Math.round((n / seconds) * 10) / 10 : 0);
  return {
    requests: tally.requests,
    requests_per_second: per(tally.requests),
    bytes: tally.bytes,
    bytes_per_second: Math.round(seconds > 0 ? tally.bytes / seconds : 0),
    latency_ms: percentilesMs(tally.latency),
    by_kind: Object.fromEntries(
      REQUEST_KINDS.map((kind) => [kind, { requests: tally.byKind[kind].requests, latency_ms: percentilesMs(tally.byKind[kind].latency) }]),
    ) as Summary['by_kind'],
    statuses: tally.statuses,
    errors: { total: errorCount(tally), by_kind: { ...tally.errors }, by_status: tally.errorStatuses },
    checked_bodies: tally.checked,
    revalidations: { sent: tally.revalidations, not_modified: tally.notModified },
  };
}

function percentilesOf(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), 'p99.9': at(0.999), max: sorted.at(-1) ?? 0 };
}

export function buildReport(result: RunResult, settings: { mode: 'open' | 'closed'; rate?: number; connections?: number; sites: number }): LoadReport {
  const activeS = result.targets.reduce((sum, target) => sum + target.activeMs, 0) / 1000;
  const threads = result.threads.length;
  const cpuPercent = Math.round((result.cpuMs / (result.elapsedMs * result.cores)) * 1000) / 10;
  const busiest = Math.max(...result.threads.map((t) => t.event_loop_utilization));
  const worstLag = Math.max(...result.threads.map((t) => t.send_lag_p99_ms));
  const reasons: string[] = [];
  if (busiest > 0.9) reasons.push(`a generator thread was busy ${Math.round(busiest * 100)} % of the time`);
  if (settings.mode === 'open' && worstLag > 20) reasons.push(`requests left up to ${Math.round(worstLag)} ms (p99) after their intended time`);
  if (cpuPercent > 80) reasons.push(`the generator used ${cpuPercent} % of all cores`);
  const deployed = result.deploys.filter((event) => event.status === 200 || event.status === 201);
  return {
    format: 'plinth-load-result',
    version: 1,
    started_at: new Date(result.startedAt).toISOString(),
    duration_s: Math.round(activeS * 10) / 10,
    mode: settings.mode,
    ...(settings.mode === 'open' ? { rate: settings.rate } : { connections: settings.connections }),
    sites: settings.sites,
    generator: {
      threads,
      cores: result.cores,
      cpu_percent: cpuPercent,
      per_thread: result.threads.map((t) => ({ ...t, event_loop_utilization: Math.round(t.event_loop_utilization * 1000) / 1000 })),
      bottleneck: reasons.length > 0,
      ...(reasons.length > 0 ? { note: `The generator may have been the limit: ${reasons.join('; ')}. Run it on another machine or with a lower rate.` } : {}),
    },
    overall: summarise(result.overall, activeS),
    targets: result.targets.map((target) => ({ target: target.label, ...summarise(target.tally, target.activeMs / 1000) })),
    rounds: result.rounds,
    deploys: {
      count: result.deploys.length,
      failed: result.deploys.length - deployed.length,
      deploy_ms: percentilesOf(deployed.map((event) => event.deploy_ms)),
      visible_ms: percentilesOf(deployed.flatMap((event) => (event.visible_ms === undefined ? [] : [event.visible_ms]))),
      events: result.deploys,
    },
    timeline: result.timeline.map(({ second, target, tally }) => ({
      second,
      target,
      requests: tally.requests,
      errors: errorCount(tally),
      bytes: tally.bytes,
      latency_ms: percentilesMs(tally.latency),
    })),
  };
}
