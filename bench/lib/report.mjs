// Machine facts, result tables, target verdicts, and the marked section of bench/RESULTS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runCapture } from './proc.mjs';
import { formatSummary, median, pairedRatio, summarize } from './rounds.mjs';

export async function machineInfo(root) {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const first = async (cmd, args) => {
    try {
      const { stdout, stderr } = await runCapture(cmd, args, { cwd: root });
      return (stdout + stderr).trim().split('\n')[0];
    } catch {
      return 'n/a';
    }
  };
  const dirty = (await first('git', ['status', '--porcelain'])) ? ' (uncommitted changes)' : '';
  const require = createRequire(import.meta.url);
  return {
    cpu,
    cores: os.availableParallelism(),
    memoryGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    nginx: (await first('nginx', ['-v'])).replace(/^nginx version:\s*/, ''),
    lighttpd: (await first('lighttpd', ['-v'])).replace(/\s*-.*$/, ''),
    wrk: (await first('wrk', ['-v'])).split(' Copyright')[0].trim(),
    autocannon: require('autocannon/package.json').version,
    commit: (await first('git', ['rev-parse', '--short', 'HEAD'])) + dirty,
    date: new Date().toISOString(),
  };
}

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const ms = (n, gen) => (!Number.isFinite(n) ? '–' : gen === 'wrk' ? `${n.toFixed(2)} ms` : `${n} ms`);
const x = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '–');
const pct = (r) => (Number.isFinite(r) ? `${(100 * r).toFixed(0)}%` : '–');
const mib = (b) => (Number.isFinite(b) ? `${(b / 1024 ** 2).toFixed(0)} MiB` : '–');
const range = (s, f) => (s && s.n > 1 ? `${f(s.min)}–${f(s.max)}` : '');
const isPlinth = (id) => id === 'plinth' || id.startsWith('plinth-');
const isNginx = (id) => id.startsWith('nginx');

/**
 * Summarizes `samples[gen][scenario][server]` (results by round, index i = round i) into cells:
 * medians and ranges over the rounds, and ratios taken round by round (Plinth ÷ the better nginx
 * of that round, every server ÷ the ceiling of that round), then their median and range.
 */
export function summarizeCells(samples) {
  const cells = {};
  for (const [gen, byScenario] of Object.entries(samples)) {
    for (const [sc, byTarget] of Object.entries(byScenario)) {
      const ids = Object.keys(byTarget);
      const rps = (id) => byTarget[id].map((r) => r?.rps);
      const rounds = Math.max(...ids.map((id) => byTarget[id].length));
      const nginxIds = ids.filter(isNginx);
      const bestNginxRps = Array.from({ length: rounds }, (_, i) => Math.max(...nginxIds.map((id) => byTarget[id][i]?.rps).filter(Number.isFinite)));
      const out = { byTarget: {}, bestNginxRps: nginxIds.length ? bestNginxRps : null, rounds };
      for (const id of ids) {
        const runs = byTarget[id];
        out.byTarget[id] = {
          runs,
          rps: summarize(rps(id)),
          mbps: median(runs.map((r) => r.mbps)),
          p50: median(runs.map((r) => r.p50)),
          p99: summarize(runs.map((r) => r.p99)),
          errors: runs.reduce((a, r) => a + r.errors, 0),
          badStatus: runs.reduce((a, r) => a + r.badStatus, 0),
          vsNginx: isPlinth(id) && nginxIds.length ? pairedRatio(rps(id), bestNginxRps) : null,
          ofCeiling: byTarget.ceiling && id !== 'ceiling' ? pairedRatio(rps(id), rps('ceiling')) : null,
          ofPagesCeiling: byTarget['ceiling-pages'] && id !== 'ceiling-pages' ? pairedRatio(rps(id), rps('ceiling-pages')) : null,
        };
      }
      // Labelled "best nginx" in the tables: the higher median (the ratios use each round's better one).
      out.bestNginx = nginxIds.sort((a, b) => out.byTarget[b].rps.median - out.byTarget[a].rps.median)[0];
      (cells[gen] ??= {})[sc] = out;
    }
  }
  return cells;
}

/** One markdown table per generator: every server per scenario, medians and ranges of the rounds. */
export function resultsTable(gen, cells, scenarios, labels) {
  const rows = [
    '| Scenario | Server | req/s, median | req/s, range | MB/s | p50 | p99, median | p99, range | errors / bad status (all rounds) | Plinth ÷ best nginx, median of rounds (range) | % of ceiling, median of rounds (range) |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const msg = (n) => ms(n, gen);
  for (const sc of scenarios) {
    const cell = cells[gen]?.[sc.id];
    if (!cell) continue;
    for (const [id, c] of Object.entries(cell.byTarget)) {
      const label = labels[id] + (id === cell.bestNginx ? ' (best nginx)' : '');
      rows.push(
        `| ${sc.title} | ${label} | ${f0(c.rps.median)} | ${range(c.rps, f0)} | ${f1(c.mbps)} | ${msg(c.p50)} | ${msg(c.p99.median)} | ${range(c.p99, msg)} | ${c.errors} / ${c.badStatus} | ${c.vsNginx ? formatSummary(c.vsNginx, x) : ''} | ${c.ofCeiling ? formatSummary(c.ofCeiling, pct) : ''} |`,
      );
    }
  }
  return rows.join('\n');
}

/** The serving goals (issue 11), checked per generator on the medians of per-round ratios. */
export function checkTargets(gen, cells) {
  const r = cells[gen] ?? {};
  const checks = [];
  const runsOf = (sc, id, key) => r[sc]?.byTarget[id]?.runs.map((run) => run[key]);
  const vsNginx = (id, title, factor) => {
    const s = r[id]?.byTarget.plinth?.vsNginx;
    const goal = factor === null ? ' (reported, no goal)' : `: req/s ≥ ${factor.toFixed(1)}× best nginx`;
    checks.push({ name: `${title}${goal}`, value: formatSummary(s, x), pass: factor === null || !s?.n ? null : s.median >= factor });
  };
  vsNginx('page2k', '2 KB page', 1.2);
  vsNginx('pages', 'page rotation', 1.2);
  vsNginx('sites', 'many-sites rotation', 1.2);
  vsNginx('script60k', '60 KB script', 1.0);
  vsNginx('image200k', '200 KB image', 1.0);
  vsNginx('file5m', '5 MB file', 1.0);
  const p = r.page2k?.byTarget.plinth;
  const one = r.page2k?.byTarget['nginx-1'];
  const p99 = p && one ? pairedRatio(runsOf('page2k', 'plinth', 'p99'), runsOf('page2k', 'nginx-1', 'p99')) : null;
  checks.push({
    name: "2 KB page: p99 ≤ nginx 1 worker's (median of the per-round ratio ≤ 1)",
    value: p99 ? `${ms(p.p99.median, gen)} vs ${ms(one.p99.median, gen)}; ${formatSummary(p99, x)}` : 'n/a',
    pass: p99?.n ? p99.median <= 1 : null,
  });
  const light = p && r.page2k?.byTarget.lighttpd ? pairedRatio(runsOf('page2k', 'plinth', 'rps'), runsOf('page2k', 'lighttpd', 'rps')) : null;
  checks.push({ name: '2 KB page: within 10 % of lighttpd (≥ 0.9×)', value: formatSummary(light, x), pass: light?.n ? light.median >= 0.9 : null });
  vsNginx('file50m', '50 MB file against nginx sendfile', null);
  const c = p?.ofCeiling;
  checks.push({ name: '2 KB page: req/s ≥ 85% of the ceiling', value: formatSummary(c, pct), pass: c?.n ? c.median >= 0.85 : null });
  // A bare uWS thread answering any path with 2 KB bounds what a uWS server can reach on a rotation.
  for (const [id, title] of [
    ['pages', 'page rotation'],
    ['sites', 'many-sites rotation'],
  ]) {
    const rp = r[id]?.byTarget.plinth?.ofCeiling;
    const cn = r[id]?.bestNginxRps && r[id].byTarget.ceiling ? pairedRatio(runsOf(id, 'ceiling', 'rps'), r[id].bestNginxRps) : null;
    checks.push({
      name: `${title}: Plinth ÷ ceiling, and the ceiling ÷ best nginx (reported, no goal)`,
      value: rp && cn ? `${formatSummary(rp, pct)}; ${formatSummary(cn, x)}` : 'n/a',
      pass: null,
    });
  }
  // With bench:serve's `ceiling-pages` (each page its own bytes, found by URL) in the run.
  const rpp = r.pages?.byTarget.plinth?.ofPagesCeiling;
  if (rpp)
    checks.push({
      name: 'page rotation: Plinth ÷ ceiling-pages, and ceiling-pages ÷ ceiling (reported, no goal)',
      value: `${formatSummary(rpp, pct)}; ${formatSummary(r.pages.byTarget['ceiling-pages'].ofCeiling, pct)}`,
      pass: null,
    });
  const plinths = Object.values(r)
    .map((cell) => cell.byTarget.plinth)
    .filter(Boolean);
  const errs = plinths.reduce((a, t) => a + t.errors + t.badStatus, 0);
  checks.push({ name: 'Plinth: no errors or unexpected statuses', value: String(errs), pass: plinths.length ? errs === 0 : null });
  return checks;
}

const verdict = (pass) => (pass === null ? '–' : pass ? 'PASS' : 'MISS');

export function targetsTable(cells, gens) {
  const per = Object.fromEntries(gens.map((g) => [g, checkTargets(g, cells)]));
  const head = `| Target |${gens.map((g) => ` ${g} | ${g} verdict |`).join('')}\n|---|${gens.map(() => '--:|:-:|').join('')}`;
  const rows = per[gens[0]].map((c, i) => `| ${c.name} |${gens.map((g) => ` ${per[g][i].value} | ${verdict(per[g][i].pass)} |`).join('')}`);
  return `${head}\n${rows.join('\n')}`;
}

/** The whole markdown section (also printed to stdout). */
export function renderSection({ machine, setup, cells, scenarios, labels, gens, memory, commands, notes }) {
  const out = [];
  out.push('## Serving: Plinth vs nginx and lighttpd vs a bare uWS ceiling (`npm run bench:serve`)', '');
  out.push(`Run ${machine.date}, commit \`${machine.commit}\`.`, '');
  out.push('| CPU | Cores | Memory | Kernel | Node | nginx | lighttpd | wrk | autocannon |', '|---|--:|--:|---|---|---|---|---|---|');
  out.push(
    `| ${machine.cpu} | ${machine.cores} | ${machine.memoryGiB} GiB | ${machine.kernel} | ${machine.node} | ${machine.nginx} | ${machine.lighttpd} | ${machine.wrk} | ${machine.autocannon} |`,
    '',
  );
  out.push('### Set-up', '', ...setup.map((s) => `- ${s}`), '');
  out.push('### Goals (issue 11)', '');
  out.push(
    "wrk decides: autocannon runs in one Node thread on the same 2 cores and saturates before a fast server does, so its ratios understate the servers' differences.",
    '',
  );
  out.push(
    'Every ratio is taken within a round (both servers measured seconds apart) and the median of those per-round ratios is shown, with their range in brackets.',
    '',
  );
  out.push(targetsTable(cells, gens), '');
  for (const gen of gens) {
    out.push(`### ${gen}`, '', resultsTable(gen, cells, scenarios, labels), '');
  }
  out.push('### Plinth memory', '');
  out.push(
    memory
      ? `RSS after start ${mib(memory.startRss)}, highest sampled during load ${mib(memory.maxRss)}, at the end ${mib(memory.last)}, peak (VmHWM) ${mib(memory.hwm)}; ${memory.threads} HTTP threads.`
      : 'Plinth was not run.',
    '',
  );
  if (notes.length) out.push('### Notes', '', ...notes.map((n) => `- ${n}`), '');
  out.push('### Commands', '', '```', ...commands, '```');
  return out.join('\n');
}

/** Whether this run only prints: BENCH_NO_WRITE set to anything but 0 leaves RESULTS.md alone. */
export const noWrite = () => Boolean(process.env.BENCH_NO_WRITE) && process.env.BENCH_NO_WRITE !== '0';

/** Prints a bench's section, then writes it into bench/RESULTS.md (between its markers) unless `noWrite()`. */
export function publishSection(section, name) {
  console.log(`\n${section}\n`);
  if (noWrite()) return;
  writeResultsFile(fileURLToPath(new URL('../RESULTS.md', import.meta.url)), section, name);
  console.log(`wrote bench/RESULTS.md (${name} section)`);
}

/** Replaces the text between one bench's markers (or appends the section) so benches share the file. */
export function writeResultsFile(path, section, name = 'serve') {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${section}\n${end}`;
  let text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n\nEach bench replaces only its own marked section.\n\n';
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  text = a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, text);
}
