// Analytics bench (issue 37): what counting page views costs serving. Two Plinth processes of this
// build, side by side, each with its own copy of the same site: analytics on (the default) and
// off (PLINTH_ANALYTICS=0), loaded at the same time, each by its own wrk with half the
// connections, both servers pinned to one core and both wrk to the others; per round, the CPU
// time each process spent per request it answered (all its threads, /proc). Both share whatever
// the machine does in that moment, so their ratio holds still where figures taken one arm after
// the other swing (see metrics.mjs). The ratio is off ÷ on, so it reads as a throughput ratio;
// the goal is ≥ 0.97. Scenarios: one 2 KB page as a browser asks for it (every request a page
// view of one visitor with a referrer), and the same page from rotating user agents (each a new
// visitor, so every request adds an entry to the thread's batch until it is written), and the
// page as wrk asks for it by default, without a user agent (a crawler's view, as in bench:serve),
// and a browser loading the page with its ten assets (one page view in eleven requests).
//
// BENCH_PROXIED=1 runs both arms behind a proxy trusted by number (PLINTH_TRUST_PROXY=1) and the
// page2k and pageload requests carry `X-Forwarded-For`, as the shipped nginx and Caddy files send it.
//
// Env: BENCH_DURATION (s per round, default 3), BENCH_ROUNDS (10), BENCH_CONNECTIONS (64),
// BENCH_SCENARIOS (page2k,visitors,crawler,pageload,asset), BENCH_PROXIED, BENCH_SAME, PLINTH_THREADS (default 1).
// Prints a Markdown table.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTimeMs, ensureTools, stopChild } from './lib/proc.mjs';
import { adminBuilderToken, createClient, deploy, startPlinthNode } from './lib/plinth-node.mjs';
import { formatSummary, pairedRatio, summarize } from './lib/rounds.mjs';
import { runWrk } from './lib/wrk.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const benchDir = join(root, 'bench');
const work = join(benchDir, '.work', 'analytics');
const seconds = Number(process.env.BENCH_DURATION ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const threads = process.env.PLINTH_THREADS ?? '1';
const log = (msg) => process.stdout.write(`[analytics-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const page = `<!doctype html><html><head><title>Bench</title></head><body>${'<p>bench text for a small page</p>'.repeat(55)}</body></html>`;

// The page-load scenario's assets: a style sheet, a script and eight small images.
const siteFiles = [
  { path: 'index.html', content: page },
  { path: 'style.css', content: 'body { margin: 0 auto; max-width: 40em; }\n'.repeat(120) },
  { path: 'app.js', content: 'console.log("bench");\n'.repeat(400) },
  ...Array.from({ length: 8 }, (_, k) => ({ path: `img/${k + 1}.png`, content: Buffer.alloc(4096, k).toString('base64'), encoding: 'base64' })),
];

const proxied = process.env.BENCH_PROXIED === '1';
const proxyEnv = proxied ? { PLINTH_TRUST_PROXY: '1' } : {};
const forwarded = proxied ? { 'X-Forwarded-For': '203.0.113.7' } : {};
const ARMS = [
  // BENCH_SAME=1: both arms with analytics off, to show what the method itself reads between two processes.
  { id: 'on', env: { ...proxyEnv, ...(process.env.BENCH_SAME === '1' ? { PLINTH_ANALYTICS: '0' } : {}) } },
  { id: 'off', env: { ...proxyEnv, PLINTH_ANALYTICS: '0' } },
];

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
await ensureTools({ wrk: 'wrk' });
const nodes = [];
try {
  for (const arm of ARMS) {
    const dataDir = join(work, arm.id);
    const env = { PLINTH_LOG_LEVEL: 'warn', PLINTH_SWEEP_INTERVAL_S: '0', PLINTH_THREADS: threads, ...arm.env };
    const node = await startPlinthNode({ root, dataDir, env, logPath: join(work, `${arm.id}.log`) });
    const token = adminBuilderToken(root, dataDir);
    const { site } = await deploy(createClient(node.port), token, { files: siteFiles }, { json: true });
    nodes.push({ ...arm, ...node, host: `${site}.sites.localhost` });
    log(`${arm.id}: port ${node.port}, site ${nodes.at(-1).host}`);
  }
  const scenarios = {
    page2k: (node) => ({ path: '/', headers: { Host: node.host, 'User-Agent': FIREFOX, Referer: 'https://news.example.net/', ...forwarded } }),
    visitors: (node) => ({ wrkScript: { file: 'visitors.lua', args: [node.host] }, headers: { Host: node.host } }),
    // A browser loading the page and its ten assets: one page view in eleven requests.
    pageload: (node) => ({ wrkScript: { file: 'page-load.lua', args: [node.host, ...Object.values(forwarded)] }, headers: { Host: node.host } }),
    // One of those assets alone, as a browser asks for it: never a page view, only the site's bytes.
    asset: (node) => ({
      path: '/style.css',
      headers: { Host: node.host, 'User-Agent': FIREFOX, 'Accept-Encoding': 'br, gzip', Referer: `http://${node.host}/`, ...forwarded },
    }),
    // wrk's own requests carry no User-Agent: a crawler's view, as bench:serve's page is counted.
    crawler: (node) => ({ path: '/', headers: { Host: node.host } }),
  };
  const only = process.env.BENCH_SCENARIOS?.split(',').map((id) => id.trim());
  const cores = os.availableParallelism();
  const pin = (list) => {
    if (cores < 2) return;
    for (const node of nodes) execFileSync('taskset', ['-a', '-p', '-c', list, String(node.child.pid)], { stdio: 'ignore' });
  };
  const rows = [];
  pin(String(cores - 1));
  for (const [name, scenario] of Object.entries(scenarios).filter(([id]) => !only || only.includes(id))) {
    const once = async () => {
      const before = nodes.map((node) => cpuTimeMs(node.child.pid));
      const runs = await Promise.all(
        nodes.map((node) =>
          runWrk({
            port: node.port,
            seconds,
            connections: connections / 2,
            scenario: scenario(node),
            benchDir,
            cpus: cores < 2 ? undefined : `0-${cores - 2}`,
          }),
        ),
      );
      return runs.map((run, i) => ((cpuTimeMs(nodes[i].child.pid) - before[i]) * 1000) / run.requests);
    };
    await once();
    const on = [];
    const off = [];
    for (let round = 0; round < rounds; round++) {
      const [onUs, offUs] = await once();
      on.push(onUs);
      off.push(offUs);
      log(`${name} round ${round + 1}: on ${onUs.toFixed(2)} µs, off ${offUs.toFixed(2)} µs CPU/request, off ÷ on ${(offUs / onUs).toFixed(3)}`);
    }
    const ratio = pairedRatio(off, on);
    const us = (v) => `${v.toFixed(2)} µs`;
    const x = (v) => `${v.toFixed(3)}×`;
    rows.push(
      `| ${name} | ${formatSummary(summarize(off), us)} | ${formatSummary(summarize(on), us)} | **${formatSummary(ratio, x)}** ${ratio.median >= 0.97 ? 'PASS' : 'MISS'} |`,
    );
  }
  pin(`0-${cores - 1}`);
  process.stdout.write(
    `\n| Scenario | CPU/request, analytics off | CPU/request, analytics on | off ÷ on |\n|---|---|---|---|\n${rows.join('\n')}\n\n${rounds} rounds of ${seconds} s, PLINTH_THREADS=${threads}${proxied ? ', behind a trusted proxy (X-Forwarded-For)' : ''}, load average at the end ${os.loadavg()[0].toFixed(1)}.\n`,
  );
} finally {
  for (const node of nodes) await stopChild(node.child);
}
