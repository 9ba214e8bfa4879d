// Site rules benchmark (issue 21): what `_redirects`, `_headers` and the link check cost.
//
// Serving: one Plinth, two sites with the same 200 pages, one plain and one with 200 redirect
// rules and 20 header blocks (four of which match every page), measured with wrk in the same run,
// in rounds whose order alternates (see lib/rounds.mjs): the ratio "with rules ÷ plain" is taken
// within each round, then its median reported. Two scenarios: one page over and over, and a
// rotation over all 200 pages.
//
// Uncached requests: every request a path never asked before (bench/wrk/unique-paths.lua), so
// the server resolves it afresh, rules included; a plain site against the same site with a
// maximal rules file, filling the caps (2,000 rules, 100 blocks, 32 segments a pattern, 2,000
// query conditions, 100 header lines) in four shapes, each requested with the paths that cost
// it most. The ratio of requests per second, plain ÷ rules, is the CPU a maximal rules file adds
// to an uncached request (the server thread is the bottleneck).
//
// Deploys: the deploy bench's 1,000-file, ~50 MB site (lib/site-gen.mjs), and the same site with
// 40 internal links in every page and 10 url() in every style sheet, deployed over HTTP; the
// server's `deploy.timing` log line says how long the deploy's analysis step (rules files and link
// check, in the ingest worker) took, against the deploy's whole time at the client. The step is
// new, so "deploy time grows by" is its share of the rest of the deploy.
//
// Env: BENCH_DURATION (s per cell and round, default 3), BENCH_ROUNDS (5), BENCH_CONNECTIONS (64),
// BENCH_DEPLOYS (3 per site), BENCH_PARTS (serve,uncached,deploys: which parts run),
// BENCH_NO_WRITE=1 to print only. About 4 min.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopChild, waitReady } from './lib/proc.mjs';
import { adminBuilderToken } from './lib/plinth-node.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { runWrk } from './lib/wrk.mjs';
import { formatSummary, median, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { addLinks, writeSite } from './lib/site-gen.mjs';
import { tarGz } from './lib/archive.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const benchDir = join(root, 'bench');
const work = join(benchDir, '.work', 'site-rules');
const seconds = Number(process.env.BENCH_DURATION ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const deploys = Number(process.env.BENCH_DEPLOYS ?? 3);
const PAGES = 200;
const parts = new Set((process.env.BENCH_PARTS ?? 'serve,uncached,deploys').split(','));
// The rules file caps at their defaults (PLINTH_REDIRECTS_MAX_RULES, PLINTH_RULES_FILE_KB, …).
const MAX_RULES = 2000;
const MAX_BLOCKS = 100;
const MAX_FILE_BYTES = 1024 * 1024;
// The caps on a rules file at their defaults (PLINTH_RULES_MAX_SEGMENTS, PLINTH_REDIRECTS_MAX_CONDITIONS, PLINTH_HEADERS_MAX_LINES).
const MAX_SEGMENTS = 32;
const MAX_CONDITIONS = 2000;
const MAX_HEADER_LINES = 100;
const placeholders = Array.from({ length: MAX_SEGMENTS - 1 }, (_, k) => `:p${k}`).join('/');
const literals = Array(MAX_SEGMENTS - 1)
  .fill('a')
  .join('/');
/**
 * Maximal rules files, each filling the caps one way, and the requests that cost them most (a
 * path prefix and a suffix; every request adds its own number). `redirect(i)` and `block(i)` give
 * rule and block `i`; none of them matches the requests unless said.
 */
const MAXIMAL = {
  placeholders: {
    // `/:p0/…/:p30/r<i>`: every segment but the last matches any path of that length.
    what: `placeholders that every segment of the path matches, patterns and paths of ${MAX_SEGMENTS} segments`,
    redirect: (i) => `/${placeholders}/r${i}  /pages/p0000.html  301`,
    block: (i) => `/${placeholders}/h${i}\n  X-Block: ${i}`,
    prefix: `/${Array(MAX_SEGMENTS - 1)
      .fill('s')
      .join('/')}/`,
    suffix: '',
  },
  literals: {
    // `/a/…/a/r<i>`: the path repeats the literal, so every pattern matches up to its last segment.
    what: `one literal that the path repeats, patterns and paths of ${MAX_SEGMENTS} segments`,
    redirect: (i) => `/${literals}/r${i}  /pages/p0000.html  301`,
    block: (i) => `/${literals}/h${i}\n  X-Block: ${i}`,
    prefix: `/${literals}/`,
    suffix: '',
  },
  conditions: {
    // `/* z<i>=v`: every rule's path matches, and each has a condition to check.
    what: `rules for \`/*\` with a query condition each (${MAX_CONDITIONS}), none met`,
    redirect: (i) => `/* z${i}=v  /pages/p0000.html  301`,
    block: (i) => `/h${i}/*\n  X-Block: ${i}`,
    prefix: '/u/',
    suffix: '?q=1',
  },
  headers: {
    // Every block is for `/*`: each answer gets all ${MAX_HEADER_LINES} header lines merged.
    what: `blocks for \`/*\` with ${MAX_HEADER_LINES} header lines between them, all applied`,
    redirect: (i) => `/r${i}  /pages/p0000.html  301`,
    block: (i) => `/*\n${Array.from({ length: MAX_HEADER_LINES / MAX_BLOCKS }, (_, k) => `  X-H${i}-${k}: v`).join('\n')}`,
    prefix: '/u/',
    suffix: '',
  },
};

/** `lines` as one file, as many of them as fit the file cap. */
function fill(lines, max) {
  let bytes = 0;
  const kept = [];
  for (const line of lines) {
    if (kept.length >= max || bytes + line.length + 1 > MAX_FILE_BYTES) break;
    kept.push(line);
    bytes += line.length + 1;
  }
  return kept;
}

function maximalRules(dir, shape) {
  const { redirect, block } = MAXIMAL[shape];
  const redirects = fill(
    Array.from({ length: MAX_RULES }, (_, i) => redirect(i)),
    MAX_RULES,
  );
  writeFileSync(join(dir, '_redirects'), `${redirects.join('\n')}\n`);
  // A block is cut to its whole lines if the file cap ends inside it.
  const text = Array.from({ length: MAX_BLOCKS }, (_, i) => block(i)).join('\n');
  const cut = text.length > MAX_FILE_BYTES - 1 ? text.slice(0, text.lastIndexOf('\n', MAX_FILE_BYTES - 1)) : text;
  writeFileSync(join(dir, '_headers'), `${cut}\n`);
  return { rules: redirects.length, headerLines: cut.split('\n').filter((line) => line.startsWith(' ')).length };
}
const log = (msg) => process.stdout.write(`[site-rules-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

function post(port, token, body) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/deploy',
        method: 'POST',
        headers: { host: 'api.localhost', authorization: `Bearer ${token}`, 'content-length': body.byteLength },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text), ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const page = (i) =>
  `<!doctype html><html><head><title>Page ${i}</title><link rel="stylesheet" href="/style.css"></head><body><h1>Page ${i}</h1>${'<p>Some text of the page, long enough to be a page.</p>'.repeat(30)}</body></html>`;

function writeServeSite(dir, withRules) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'pages'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), page('home'));
  writeFileSync(join(dir, 'style.css'), 'body{font:16px sans-serif}\n'.repeat(20));
  for (let i = 0; i < PAGES; i++) writeFileSync(join(dir, 'pages', `p${String(i).padStart(4, '0')}.html`), page(i));
  if (!withRules) return;
  const redirects = [];
  for (let i = 0; i < 200; i++) {
    // Old addresses of every page, in the shapes real sites use: plain, splat, placeholder.
    if (i % 3 === 0) redirects.push(`/old/p${i}        /pages/p${String(i).padStart(4, '0')}.html   301`);
    else if (i % 3 === 1) redirects.push(`/archive/${i}/*   /pages/:splat   302`);
    else redirects.push(`/blog/${i}/:slug   /pages/:slug.html   301`);
  }
  writeFileSync(join(dir, '_redirects'), `${redirects.join('\n')}\n`);
  const headers = [
    '/*\n  X-Frame-Options: DENY\n  Permissions-Policy: camera=()',
    '/pages/*\n  Cache-Control: public, max-age=120',
    "/pages/:page\n  Content-Security-Policy: default-src 'self'",
    '/*\n  X-Robots-Tag: all',
  ];
  for (let i = 0; i < 16; i++) headers.push(`/section-${i}/*\n  X-Section: ${i}`);
  writeFileSync(join(dir, '_headers'), `${headers.join('\n')}\n`);
}

/** Adds 40 internal links to every page and 10 url() to every style sheet of a deploy-bench site. */

/** The `deploy.timing` lines of the server log, by revision. */
function timings(logPath) {
  const byRevision = new Map();
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.includes('deploy.timing')) continue;
    try {
      const entry = JSON.parse(line);
      byRevision.set(entry.revision, entry);
    } catch {
      /* not JSON */
    }
  }
  return byRevision;
}

const port = await freePort();
const dataDir = join(work, 'data');
const logPath = join(work, 'plinth.log');
const child = startChild(process.execPath, [join(root, 'dist', 'main.js')], {
  env: { PLINTH_PORT: String(port), PLINTH_DATA_DIR: dataDir, PLINTH_LOG_LEVEL: 'info', PLINTH_LISTEN_HOST: '127.0.0.1', PLINTH_SWEEP_INTERVAL_S: '0' },
  cwd: root,
  logPath,
});
try {
  // A loaded machine can take a while to start the server.
  await waitReady(child, port, 'localhost', '/', 120_000);
  const token = adminBuilderToken(root, dataDir);

  // ---- serving --------------------------------------------------------------------------------
  const hosts = {};
  for (const [arm, withRules] of [
    ['plain', false],
    ['rules', true],
  ]) {
    const dir = join(work, `serve-${arm}`);
    writeServeSite(dir, withRules);
    const answer = await post(port, token, readFileSync(tarGz(dir, join(work, `serve-${arm}.tar.gz`))));
    if (answer.status !== 201) throw new Error(`deploy of the ${arm} site failed: ${JSON.stringify(answer.json)}`);
    hosts[arm] = `${answer.json.site.name}.sites.localhost`;
  }
  log(`sites: ${JSON.stringify(hosts)}`);
  const scenarios = {
    page: (host) => ({ path: '/pages/p0001.html', headers: { Host: host } }),
    rotation: (host) => ({ wrkScript: { file: 'pages.lua', args: [host, String(PAGES)] } }),
  };
  const serve = {};
  for (const [name, scenario] of parts.has('serve') ? Object.entries(scenarios) : []) {
    const measure = async (arm) => runWrk({ port, seconds, connections, scenario: scenario(hosts[arm]), benchDir });
    const [plain, rules] = await runRounds(
      ['plain', 'rules'],
      rounds,
      async (arm, round) => {
        const result = await measure(arm);
        if (result.errors > 0 || result.badStatus > 0) throw new Error(`${name}/${arm}: ${result.errors} errors, ${result.badStatus} bad statuses`);
        log(`${name} round ${round + 1} ${arm}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`);
        return result;
      },
      { warmup: (arm) => runWrk({ port, seconds: 1, connections, scenario: scenario(hosts[arm]), benchDir }) },
    );
    serve[name] = {
      plain,
      rules,
      ratio: pairedRatio(
        rules.map((r) => r.rps),
        plain.map((r) => r.rps),
      ),
    };
  }

  // ---- uncached requests against maximal rules files -----------------------------------------
  const uncached = {};
  const ruleCounts = {};
  if (parts.has('uncached')) {
    for (const shape of Object.keys(MAXIMAL)) {
      const dir = join(work, `uncached-${shape}`);
      writeServeSite(dir, false);
      ruleCounts[shape] = maximalRules(dir, shape);
      const answer = await post(port, token, readFileSync(tarGz(dir, join(work, `uncached-${shape}.tar.gz`))));
      if (answer.status !== 201) throw new Error(`deploy of the ${shape} rules site failed: ${JSON.stringify(answer.json)}`);
      hosts[shape] = `${answer.json.site.name}.sites.localhost`;
    }
    for (const shape of Object.keys(MAXIMAL)) {
      const scenario = (arm) => ({ wrkScript: { file: 'unique-paths.lua', args: [hosts[arm], MAXIMAL[shape].prefix, MAXIMAL[shape].suffix] } });
      const measure = (arm) => runWrk({ port, seconds, connections, scenario: scenario(arm), benchDir });
      const [plain, rules] = await runRounds(
        ['plain', shape],
        rounds,
        async (arm, round) => {
          const result = await measure(arm);
          // A server that cannot keep up lets wrk's 2 s timeout fire: counted and shown, not fatal.
          log(`uncached ${shape} round ${round + 1} ${arm}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms, ${result.errors} errors`);
          // A slow arm leaves requests in flight: let the server finish them before the next cell.
          await new Promise((resolve) => setTimeout(resolve, 1000));
          return result;
        },
        { warmup: (arm) => runWrk({ port, seconds: 1, connections, scenario: scenario(arm), benchDir }) },
      );
      uncached[shape] = {
        plain,
        rules,
        cost: pairedRatio(
          plain.map((r) => r.rps),
          rules.map((r) => r.rps),
        ),
      };
    }
  }

  // ---- deploys --------------------------------------------------------------------------------
  const deployRuns = {};
  for (const [arm, links] of parts.has('deploys')
    ? [
        ['bench site', false],
        ['bench site with links', true],
      ]
    : []) {
    const runs = [];
    for (let r = 0; r < deploys; r++) {
      const dir = join(work, 'deploy-site');
      writeSite(dir, 1000, 50 * 1024 * 1024, 70_000 + r * 10 + (links ? 5 : 0));
      if (links) addLinks(dir);
      const archive = readFileSync(tarGz(dir, join(work, 'deploy-site.tar.gz')));
      const answer = await post(port, token, archive);
      if (answer.status !== 201) throw new Error(`deploy failed: ${JSON.stringify(answer.json)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const timing = timings(logPath).get(answer.json.revision.id);
      if (!timing) throw new Error('no deploy.timing line for the revision');
      runs.push({ ms: answer.ms, analyzeMs: timing.analyzeMs, warnings: answer.json.warnings_total });
      log(`${arm} deploy ${r + 1}: ${Math.round(answer.ms)} ms, analysis ${timing.analyzeMs} ms, ${answer.json.warnings_total} warnings`);
    }
    deployRuns[arm] = runs;
  }

  const machine = await machineInfo(root);
  const n0 = (v) => Math.round(v).toLocaleString('en-US');
  const x = (r) => `${r.toFixed(3)}×`;
  const pct = (r) => `${(r * 100).toFixed(1)} %`;
  const serveRows = Object.entries(serve).map(([name, s]) => {
    const plainRps = summarize(s.plain.map((r) => r.rps));
    const rulesRps = summarize(s.rules.map((r) => r.rps));
    const p99 = (runs) => formatSummary(summarize(runs.map((r) => r.p99)), (v) => `${v.toFixed(2)} ms`);
    return `| ${name === 'page' ? 'one 2 KB page' : `rotation over ${PAGES} pages`} | ${formatSummary(plainRps, n0)} | ${formatSummary(rulesRps, n0)} | ${p99(s.plain)} / ${p99(s.rules)} | ${formatSummary(s.ratio, x)} | ${s.ratio.median >= 0.95 ? 'met' : 'NOT met'} |`;
  });
  const uncachedRows = Object.entries(uncached).map(([shape, u]) => {
    const rps = (runs) => formatSummary(summarize(runs.map((r) => r.rps)), n0);
    const perRequest = (runs) => formatSummary(summarize(runs.map((r) => 1e6 / r.rps)), (v) => `${v.toFixed(1)} µs`);
    const { rules, headerLines } = ruleCounts[shape];
    const timeouts = u.rules.reduce((sum, r) => sum + r.errors, 0) + u.plain.reduce((sum, r) => sum + r.errors, 0);
    return `| ${MAXIMAL[shape].what} (${rules} rules; ${MAX_BLOCKS} blocks, ${headerLines} header lines) | ${rps(u.plain)} | ${rps(u.rules)} | ${perRequest(u.plain)} / ${perRequest(u.rules)} | ${formatSummary(u.cost, x)} | ${timeouts} | ${u.cost.median <= 2 ? 'met' : 'NOT met'} |`;
  });
  const deployRows = Object.entries(deployRuns).map(([arm, runs]) => {
    const share = summarize(runs.map((r) => r.analyzeMs / (r.ms - r.analyzeMs)));
    return `| ${arm} | ${formatSummary(summarize(runs.map((r) => r.ms)), (v) => `${n0(v)} ms`)} | ${formatSummary(summarize(runs.map((r) => r.analyzeMs)), (v) => `${n0(v)} ms`)} | ${formatSummary(share, pct)} | ${median(runs.map((r) => r.warnings))} | ${share.median <= 0.1 ? 'met' : 'NOT met'} |`;
  });
  const load = (await import('node:os'))
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  const section = [
    '## Site rules (`npm run bench:serve`, site-rules part)',
    '',
    `Run ${machine.date}, commit \`${machine.commit}\`, ${machine.cores} cores, Node ${machine.node}, load average at the end ${load}.`,
    '',
    `Serving: one Plinth with its default settings, two sites with the same ${PAGES} pages (2 KB each), one plain and one with 200 \`_redirects\` rules (plain, splat and placeholder rules for old addresses) and 20 \`_headers\` blocks, four of which match every page. \`wrk -t1 -c${connections}\`, ${seconds} s per cell, ${rounds} rounds after a 1 s warm-up, the two sites in an order that alternates each round; medians of the rounds (range in brackets), and the ratio taken within each round, then its median.`,
    '',
    '| Scenario | Plain site, req/s | Site with rules, req/s | p99 plain / with rules | With rules ÷ plain | ≥ 0.95× |',
    '|---|--:|--:|--:|--:|:-:|',
    ...serveRows,
    '',
    `Uncached requests: every request a path never asked before (\`bench/wrk/unique-paths.lua\`, a 404), so each is resolved afresh, rules included. The plain site against the same site with a maximal rules file: ${MAX_RULES} \`_redirects\` rules and ${MAX_BLOCKS} \`_headers\` blocks at the default caps (${MAX_SEGMENTS} segments a pattern, ${MAX_CONDITIONS} query conditions, ${MAX_HEADER_LINES} header lines), in four shapes, each requested with the paths that cost it most; the patterns of the first two end in a literal of their own, so none matches. Same wrk settings and rounds; the server thread is the bottleneck, so plain ÷ rules in requests per second is the cost of an uncached request with the rules, in plain requests (per request: the thread's time, 1 ÷ req/s).`,
    '',
    '| Maximal rules file | Plain site, req/s | Site with rules, req/s | Per request, plain / with rules | Cost with rules ÷ plain | Timeouts | ≤ 2× |',
    '|---|--:|--:|--:|--:|--:|:-:|',
    ...uncachedRows,
    '',
    `Deploys: the deploy bench's 1,000-file, ~50 MB site as a \`.tar.gz\` over HTTP (a new site each time), and the same site with 40 internal links in each of its pages and 10 \`url()\` in each style sheet. "Analysis" is the deploy's step that compiles \`_redirects\` and \`_headers\` and checks the links (server log, \`deploy.timing\` \`analyzeMs\`); the deploy grows by that step's time over the rest of its time at the client. ${deploys} deploys each; medians (range).`,
    '',
    '| Site | Deploy, client | Analysis | Deploy time grows by | Warnings | ≤ 10 % |',
    '|---|--:|--:|--:|--:|:-:|',
    ...deployRows,
    '',
  ].join('\n');
  publishSection(section, 'site-rules');
} finally {
  await stopChild(child, 35_000);
}
