// Machine facts, result tables, target verdicts, and the marked section of bench/RESULTS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { runCapture } from './proc.mjs';

export async function machineInfo(root) {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const first = async (cmd, args) => {
    try {
      const { stdout, stderr } = await runCapture(cmd, args, { cwd: root });
      return (stdout + stderr).trim().split('\n')[0];
    } catch { return 'n/a'; }
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
const ratio = (a, b) => (a && b ? a / b : NaN);
const x = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '');
const mib = (b) => (Number.isFinite(b) ? `${(b / 1024 ** 2).toFixed(0)} MiB` : '–');

/** The nginx run (1 worker or N) with the higher req/s for one scenario and generator. */
export function bestNginx(byTarget) {
  const runs = Object.entries(byTarget).filter(([t]) => t.startsWith('nginx'));
  runs.sort((a, b) => b[1].rps - a[1].rps);
  return runs[0] ? { target: runs[0][0], ...runs[0][1] } : undefined;
}

/** One markdown table per generator: every server per scenario, ratios on Plinth's rows. */
export function resultsTable(gen, results, scenarios, labels) {
  const rows = ['| Scenario | Server | req/s | MB/s | p50 | p99 | errors / bad status | Plinth ÷ best nginx | Plinth ÷ ceiling |', '|---|---|--:|--:|--:|--:|--:|--:|--:|'];
  for (const sc of scenarios) {
    const byTarget = results[gen]?.[sc.id];
    if (!byTarget) continue;
    const best = bestNginx(byTarget);
    const ceiling = byTarget.ceiling;
    for (const [target, r] of Object.entries(byTarget)) {
      const isPlinth = target === 'plinth';
      const label = labels[target] + (best && target === best.target ? ' (best nginx)' : '');
      rows.push(`| ${sc.title} | ${label} | ${f0(r.rps)} | ${f1(r.mbps)} | ${ms(r.p50, gen)} | ${ms(r.p99, gen)} | ${r.errors} / ${r.badStatus} | ${isPlinth && best ? x(ratio(r.rps, best.rps)) : ''} | ${isPlinth && ceiling ? x(ratio(r.rps, ceiling.rps)) : ''} |`);
    }
  }
  return rows.join('\n');
}

/** The serving goals (issue 11), checked per generator; null where a number is missing. */
export function checkTargets(gen, results) {
  const r = results[gen] ?? {};
  const checks = [];
  const vsNginx = (id, title, factor) => {
    const p = r[id]?.plinth;
    const n = r[id] && bestNginx(r[id]);
    checks.push({ name: `${title}: req/s ≥ ${factor.toFixed(1)}× best nginx`, value: p && n ? x(ratio(p.rps, n.rps)) : 'n/a', pass: p && n ? p.rps >= factor * n.rps : null });
  };
  vsNginx('page2k', '2 KB page', 1.2);
  vsNginx('pages', 'page rotation', 1.2);
  vsNginx('sites', 'many-sites rotation', 1.2);
  vsNginx('script60k', '60 KB script', 1.0);
  vsNginx('image200k', '200 KB image', 1.0);
  vsNginx('file5m', '5 MB file', 1.0);
  const p = r.page2k?.plinth;
  const one = r.page2k?.['nginx-1'];
  checks.push({ name: "2 KB page: p99 ≤ nginx 1 worker's", value: p && one ? `${ms(p.p99, gen)} vs ${ms(one.p99, gen)}` : 'n/a', pass: p && one ? p.p99 <= one.p99 : null });
  const l = r.page2k?.lighttpd;
  checks.push({ name: '2 KB page: within 10 % of lighttpd (≥ 0.9×)', value: p && l ? x(ratio(p.rps, l.rps)) : 'n/a', pass: p && l ? p.rps >= 0.9 * l.rps : null });
  const big = r.file50m?.plinth;
  const bigNginx = r.file50m && bestNginx(r.file50m);
  checks.push({ name: '50 MB file against nginx sendfile (reported, no goal)', value: big && bigNginx ? x(ratio(big.rps, bigNginx.rps)) : 'n/a', pass: null });
  const c = r.page2k?.ceiling;
  checks.push({ name: '2 KB page: req/s ≥ 85% of the ceiling', value: p && c ? `${(100 * p.rps / c.rps).toFixed(1)}%` : 'n/a', pass: p && c ? p.rps >= 0.85 * c.rps : null });
  // A bare uWS thread answering any path with 2 KB bounds what a uWS server can reach on a rotation.
  for (const [id, title] of [['pages', 'page rotation'], ['sites', 'many-sites rotation']]) {
    const rc = r[id]?.ceiling;
    const rp = r[id]?.plinth;
    const rn = r[id] && bestNginx(r[id]);
    checks.push({ name: `${title}: Plinth ÷ ceiling, and the ceiling ÷ best nginx (reported, no goal)`, value: rc && rp && rn ? `${(100 * rp.rps / rc.rps).toFixed(1)}%, ${x(ratio(rc.rps, rn.rps))}` : 'n/a', pass: null });
  }
  const errs = Object.values(r).map((t) => t.plinth).filter(Boolean).reduce((a, t) => a + t.errors + t.badStatus, 0);
  checks.push({ name: 'Plinth: no errors or unexpected statuses', value: String(errs), pass: Object.values(r).some((t) => t.plinth) ? errs === 0 : null });
  return checks;
}

const verdict = (pass) => (pass === null ? '–' : pass ? 'PASS' : 'MISS');

export function targetsTable(results, gens) {
  const per = Object.fromEntries(gens.map((g) => [g, checkTargets(g, results)]));
  const head = `| Target |${gens.map((g) => ` ${g} | ${g} verdict |`).join('')}\n|---|${gens.map(() => '--:|:-:|').join('')}`;
  const rows = per[gens[0]].map((c, i) => `| ${c.name} |${gens.map((g) => ` ${per[g][i].value} | ${verdict(per[g][i].pass)} |`).join('')}`);
  return `${head}\n${rows.join('\n')}`;
}

/** The whole markdown section (also printed to stdout). */
export function renderSection({ machine, setup, results, scenarios, labels, gens, memory, commands, notes }) {
  const out = [];
  out.push('## Serving: Plinth vs nginx and lighttpd vs a bare uWS ceiling (`npm run bench:serve`)', '');
  out.push(`Run ${machine.date}, commit \`${machine.commit}\`.`, '');
  out.push('| CPU | Cores | Memory | Kernel | Node | nginx | lighttpd | wrk | autocannon |', '|---|--:|--:|---|---|---|---|---|---|');
  out.push(`| ${machine.cpu} | ${machine.cores} | ${machine.memoryGiB} GiB | ${machine.kernel} | ${machine.node} | ${machine.nginx} | ${machine.lighttpd} | ${machine.wrk} | ${machine.autocannon} |`, '');
  out.push('### Set-up', '', ...setup.map((s) => `- ${s}`), '');
  out.push('### Goals (issue 11)', '');
  out.push('wrk decides: autocannon runs in one Node thread on the same 2 cores and saturates before a fast server does, so its ratios understate the servers\' differences.', '');
  out.push(targetsTable(results, gens), '');
  for (const gen of gens) {
    out.push(`### ${gen}`, '', resultsTable(gen, results, scenarios, labels), '');
  }
  out.push('### Plinth memory', '');
  out.push(memory ? `RSS after start ${mib(memory.startRss)}, highest sampled during load ${mib(memory.maxRss)}, at the end ${mib(memory.last)}, peak (VmHWM) ${mib(memory.hwm)}; ${memory.threads} HTTP threads.` : 'Plinth was not run.', '');
  if (notes.length) out.push('### Notes', '', ...notes.map((n) => `- ${n}`), '');
  out.push('### Commands', '', '```', ...commands, '```');
  return out.join('\n');
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
