import { REQUEST_KINDS } from './mix.js';
import type { LoadReport, Summary } from './report.js';

/** The summary printed at the end of a run, for a person. */
const number = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

function targetLines(name: string, s: Summary): string[] {
  const l = s.latency_ms;
  const kinds = REQUEST_KINDS.filter((kind) => s.by_kind[kind].requests > 0)
    .map((kind) => `${kind} ${number(s.by_kind[kind].requests)} (p99 ${s.by_kind[kind].latency_ms.p99} ms)`)
    .join(', ');
  const errors = Object.entries(s.errors.by_kind)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`);
  const statuses = Object.entries(s.errors.by_status).map(([status, n]) => `${status}: ${n}`);
  return [
    `${name}: ${number(s.requests)} requests, ${number(s.requests_per_second)} req/s, ${number(s.bytes_per_second / 1e6)} MB/s`,
    `  latency ms: p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  p99.9 ${l['p99.9']}  max ${l.max}`,
    `  by kind: ${kinds || 'none'}`,
    `  errors: ${s.errors.total}${errors.length > 0 ? ` (${errors.join(', ')}${statuses.length > 0 ? `; statuses ${statuses.join(', ')}` : ''})` : ''}; bodies checked ${number(s.checked_bodies)}`,
  ];
}

export function summaryText(report: LoadReport): string {
  const lines: string[] = [];
  for (const target of report.targets) lines.push(...targetLines(target.target, target));
  if (report.targets.length > 1) lines.push(...targetLines('overall', report.overall));
  lines.push(`rounds: ${report.rounds.map((round) => round.target).join(', ')}`);
  const d = report.deploys;
  if (d.count > 0)
    lines.push(
      `deploys: ${d.count} (${d.failed} refused), answered p50 ${d.deploy_ms.p50} ms (max ${d.deploy_ms.max} ms), new bytes served p50 ${d.visible_ms.p50} ms (max ${d.visible_ms.max} ms) after the 201`,
    );
  const g = report.generator;
  lines.push(`generator: ${g.threads} threads on ${g.cores} cores, ${g.cpu_percent} % CPU${g.bottleneck ? `. ${g.note}` : ''}`);
  return lines.join('\n');
}
