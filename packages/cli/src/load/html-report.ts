import type { LoadReport, Summary } from './report.js';

/**
 * `--html FILE`: one page with everything inline (no scripts, fonts or style sheets fetched), its
 * charts drawn as SVG: throughput and latency percentiles over time, errors, the rounds of each
 * target as bands and the deploys as markers, so a person sees at a glance where it bent.
 * Every line of a chart carries `data-series`, every marker `data-marker`.
 */
const escape = (text: string | number): string =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const COLOURS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989'];
const WIDTH = 760;
const HEIGHT = 220;
const PAD = { left: 56, right: 16, top: 16, bottom: 30 };

interface Series {
  name: string;
  colour: string;
  points: Array<[number, number]>;
  dashed?: boolean;
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = Math.pow(10, Math.floor(Math.log10(value)));
  return [1, 2, 5, 10].map((step) => step * magnitude).find((candidate) => candidate >= value)!;
}

function chart(title: string, unit: string, series: Series[], report: LoadReport, options: { bars?: boolean } = {}): string {
  const seconds = Math.max(1, report.duration_s, ...report.timeline.map((t) => t.second + 1), ...report.rounds.map((r) => r.ended_s));
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.points.map(([, y]) => y))));
  const x = (s: number): number => PAD.left + (s / seconds) * (WIDTH - PAD.left - PAD.right);
  const y = (v: number): number => HEIGHT - PAD.bottom - (v / top) * (HEIGHT - PAD.top - PAD.bottom);
  const parts: string[] = [];
  report.rounds.forEach((round) => {
    const colour = COLOURS[report.targets.findIndex((t) => t.target === round.target) % COLOURS.length]!;
    parts.push(
      `<rect data-round="${round.index}" x="${x(round.started_s).toFixed(1)}" y="${PAD.top}" width="${Math.max(0.5, x(round.ended_s) - x(round.started_s)).toFixed(1)}" height="${HEIGHT - PAD.top - PAD.bottom}" fill="${colour}" fill-opacity="0.06"><title>round ${round.index + 1}: ${escape(round.target)}</title></rect>`,
    );
  });
  for (let i = 0; i <= 4; i++) {
    const value = (top * i) / 4;
    parts.push(
      `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#d0d7de" stroke-width="0.5"/>`,
    );
    parts.push(`<text x="${PAD.left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end" font-size="11">${escape(Number(value.toPrecision(3)))}</text>`);
  }
  const ticks = Math.min(10, Math.ceil(seconds));
  for (let i = 0; i <= ticks; i++) {
    const s = (seconds * i) / ticks;
    parts.push(`<text x="${x(s).toFixed(1)}" y="${HEIGHT - 10}" text-anchor="middle" font-size="11">${escape(Math.round(s * 10) / 10)} s</text>`);
  }
  for (const s of series) {
    if (options.bars) {
      const width = Math.max(1, (WIDTH - PAD.left - PAD.right) / seconds - 1);
      const bars = s.points
        .map(([sx, sy]) => `M${x(sx).toFixed(1)},${y(0).toFixed(1)}h${width.toFixed(1)}V${y(sy).toFixed(1)}h${(-width).toFixed(1)}Z`)
        .join('');
      parts.push(`<path data-series="${escape(s.name)}" d="${bars || 'M0,0'}" fill="${s.colour}"><title>${escape(s.name)}</title></path>`);
    } else {
      // A line breaks where its target had no second (another target's round): no slope across the gap.
      const d = s.points.map(([sx, sy], i) => `${i === 0 || sx - s.points[i - 1]![0] > 1 ? 'M' : 'L'}${x(sx + 0.5).toFixed(1)},${y(sy).toFixed(1)}`).join('');
      parts.push(
        `<path data-series="${escape(s.name)}" d="${d || 'M0,0'}" fill="none" stroke="${s.colour}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="4 3"' : ''}><title>${escape(s.name)}</title></path>`,
      );
    }
  }
  for (const event of report.deploys.events) {
    parts.push(
      `<line data-marker="${event.kind}" x1="${x(event.at_s).toFixed(1)}" x2="${x(event.at_s).toFixed(1)}" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}" stroke="#6e7781" stroke-dasharray="2 2"><title>${escape(`${event.kind} of ${event.site} at ${event.at_s.toFixed(1)} s: ${event.status}${event.visible_ms === undefined ? '' : `, served after ${event.visible_ms} ms`}`)}</title></line>`,
    );
  }
  const legend = series.map((s) => `<span class="key"><span class="swatch" style="background:${s.colour}"></span>${escape(s.name)}</span>`).join(' ');
  return `<figure><figcaption>${escape(title)} <small>(${escape(unit)})</small></figcaption><svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${escape(title)}"><title>${escape(title)}</title><line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}" stroke="#57606a"/><line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${HEIGHT - PAD.bottom}" y2="${HEIGHT - PAD.bottom}" stroke="#57606a"/>${parts.join('')}</svg><p class="legend">${legend}</p></figure>`;
}

function summaryRow(name: string, s: Summary): string {
  const l = s.latency_ms;
  return `<tr><th scope="row">${escape(name)}</th><td>${s.requests}</td><td>${s.requests_per_second}</td><td>${l.p50}</td><td>${l.p90}</td><td>${l.p99}</td><td>${l['p99.9']}</td><td>${l.max}</td><td>${s.errors.total}</td><td>${s.errors.by_kind.wrong_body}</td><td>${(s.bytes_per_second / 1e6).toFixed(2)}</td></tr>`;
}

export function renderHtmlReport(report: LoadReport): string {
  const targets = report.targets.map((t) => t.target);
  const throughput: Series[] = targets.map((target, i) => ({
    name: `requests/s ${target}`,
    colour: COLOURS[i % COLOURS.length]!,
    points: report.timeline.filter((t) => t.target === target).map((t) => [t.second, t.requests]),
  }));
  const latency: Series[] = targets.flatMap((target, i) =>
    (['p50', 'p90', 'p99'] as const).map((p, j) => ({
      name: `${p} ${target}`,
      colour: COLOURS[i % COLOURS.length]!,
      dashed: j === 0,
      points: report.timeline.filter((t) => t.target === target).map((t): [number, number] => [t.second, t.latency_ms[p]]),
    })),
  );
  const errors: Series[] = targets.map((target, i) => ({
    name: `errors ${target}`,
    colour: COLOURS[(i + 1) % COLOURS.length]!,
    points: report.timeline.filter((t) => t.target === target).map((t) => [t.second, t.errors]),
  }));
  const kinds = Object.entries(report.overall.by_kind)
    .map(
      ([kind, k]) =>
        `<tr><th scope="row">${escape(kind)}</th><td>${k.requests}</td><td>${k.latency_ms.p50}</td><td>${k.latency_ms.p99}</td><td>${k.latency_ms.max}</td></tr>`,
    )
    .join('');
  const errorRows = report.targets
    .map(
      (t) =>
        `<tr><th scope="row">${escape(t.target)}</th>${Object.values(t.errors.by_kind)
          .map((n) => `<td>${n}</td>`)
          .join('')}<td>${escape(
          Object.entries(t.errors.by_status)
            .map(([status, n]) => `${status}: ${n}`)
            .join(', ') || '–',
        )}</td></tr>`,
    )
    .join('');
  const g = report.generator;
  const deploys = report.deploys;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>plinth load: ${escape(report.started_at)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:60rem;padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-variant-numeric:tabular-nums}th,td{border-bottom:1px solid #d0d7de;padding:.25rem .6rem;text-align:right}th:first-child{text-align:left}
figure{margin:1rem 0 2rem}figcaption{font-weight:600}.legend{margin:.25rem 0}.key{margin-right:1rem;white-space:nowrap}.swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .75rem}
</style></head><body>
<h1>Load run of ${escape(report.started_at)}</h1>
<p>${escape(report.mode === 'open' ? `Open loop at ${report.rate} requests/s` : `Closed loop with ${report.connections} connections`)} for ${report.duration_s} s over ${report.sites} sites;
${report.rounds.length} rounds (${escape(report.rounds.map((r) => r.target).join(', '))}). Generator: ${g.threads} threads on ${g.cores} cores, ${g.cpu_percent} % CPU.</p>
${g.bottleneck ? `<p class="warn">${escape(g.note ?? 'The generator may have been the limit.')}</p>` : ''}
<h2>Summary</h2>
<table><thead><tr><th>Target</th><th>requests</th><th>req/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>errors</th><th>wrong body</th><th>MB/s</th></tr></thead>
<tbody>${report.targets.map((t) => summaryRow(t.target, t)).join('')}${report.targets.length > 1 ? summaryRow('overall', report.overall) : ''}</tbody></table>
${chart('Throughput over time', 'requests per second', throughput, report)}
${chart('Latency percentiles over time', 'ms, from the intended send time', latency, report)}
${chart('Errors over time', 'errors per second', errors, report, { bars: true })}
<h2>By kind</h2>
<table><thead><tr><th>Kind</th><th>requests</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>${kinds}</tbody></table>
<h2>Errors</h2>
<table><thead><tr><th>Target</th>${Object.keys(report.overall.errors.by_kind)
    .map((k) => `<th>${escape(k)}</th>`)
    .join('')}<th>by status</th></tr></thead><tbody>${errorRows}</tbody></table>
<h2>Deploys</h2>
<p>${deploys.count} deploys and rollbacks, ${deploys.failed} refused; answered in p50 ${deploys.deploy_ms.p50} ms (max ${deploys.deploy_ms.max} ms);
new bytes served p50 ${deploys.visible_ms.p50} ms, max ${deploys.visible_ms.max} ms after the <code>201</code>.</p>
</body></html>
`;
}
