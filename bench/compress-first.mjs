// Compressed from the first request (issue 35 §3): what compressing a deploy's small text files
// before its 201 costs the deploy, and what its first visitors get. Two embedded Plinth nodes of
// the same build run side by side: one with the default (PLINTH_COMPRESS_BEFORE_PUBLISH_KB=0: every
// variant made after the 201, and until then a serving thread makes gzip from the blob on a file's
// first request), one that gzips small text files before the 201 (2048, the default before). Each
// round deploys one new archive of bench:deploy's (bench/lib/site-gen.mjs) to each, in an order
// rotated each round, then asks the node for every text file of the site once with
// `Accept-Encoding: br, gzip` right after the 201 (one request at a time): how many came
// compressed, the bytes sent, and the time of those requests together.
//
//   node bench/compress-first.mjs [<root>[::NAME=value,…]…]   # other built checkouts beside, e.g. main's
// Env: BENCH_COMPRESS_ROUNDS (5 for the 100-file archive; the 1,000-file one takes
// BENCH_COMPRESS_BIG_ROUNDS, 3). Prints a Markdown table; every sample goes to
// bench/.work/compress-first/results.json.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminBuilderToken, createClient, deploy, SITE_DOMAIN, startPlinthNode } from './lib/plinth-node.mjs';
import { stopChild } from './lib/proc.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { writeSite } from './lib/site-gen.mjs';
import { tarGz } from './lib/archive.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(root, 'bench', '.work', 'compress-first');
// Further builds to run beside this one's two arms: `<root>[::NAME=value,…]` (e.g. main's, as before).
const arms = [
  { name: 'after the 201, gzip on demand until then (0, the default)', root, env: {} },
  { name: 'gzip before the 201 (2048)', root, env: { PLINTH_COMPRESS_BEFORE_PUBLISH_KB: '2048' } },
  ...process.argv.slice(2).map((arg) => {
    const [path, settings = ''] = arg.split('::');
    const env = Object.fromEntries(
      settings
        .split(',')
        .filter(Boolean)
        .map((pair) => pair.split('=')),
    );
    return { name: `${basename(resolve(path))}${settings ? ` (${settings})` : ''}`, root: resolve(path), env };
  }),
];
const rounds = Number(process.env.BENCH_COMPRESS_ROUNDS ?? 5);
const bigRounds = Number(process.env.BENCH_COMPRESS_BIG_ROUNDS ?? 3);
// The variants made after a 201 must not share the cores with the next timed deploy.
const IDLE_MS = 3000;
const TEXT = /\.(html|css|js|json|svg|txt|xml|md)$/;
const log = (msg) => process.stdout.write(`[compress-first ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const ms = (n) => (n < 100 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
const x = (r) => `${r.toFixed(2)}×`;

const children = new Set();
async function stopAll() {
  for (const child of children) await stopChild(child);
}

function textFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && TEXT.test(entry.name))
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)));
}

async function main() {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const nodes = [];
  for (const arm of arms) {
    const dataDir = join(work, `node-${nodes.length}`);
    mkdirSync(dataDir, { recursive: true });
    const token = adminBuilderToken(arm.root, dataDir);
    const env = {
      PLINTH_THREADS: '1',
      PLINTH_API_RATE_PER_CREDENTIAL: '0',
      PLINTH_API_RATE_PER_NETWORK: '0',
      ...arm.env,
    };
    const name = arm.name;
    const node = await startPlinthNode({ root: arm.root, dataDir, env, logPath: join(work, `node-${nodes.length}.log`) });
    children.add(node.child);
    nodes.push({ name, token, client: createClient(node.port) });
    log(`${name} on port ${node.port}`);
  }
  const rows = [];
  for (const [id, label, files, bytes, count] of [
    ['small', '100 files, ~1 MB archive', 100, 1024 * 1024, rounds],
    ['big', '1,000 files, ~50 MB archive', 1000, 50 * 1024 * 1024, bigRounds],
  ]) {
    const archives = [];
    for (let r = 0; r <= count; r++) {
      const dir = join(work, `${id}-site-${r}`);
      writeSite(dir, files, bytes, 10_000 * (r + 1) + (id === 'small' ? 5000 : 0) + 321);
      archives.push({ body: readFileSync(tarGz(dir, join(work, `${id}-${r}.tgz`))), text: textFiles(dir) });
    }
    // Archive 0 warms both nodes up and is not timed.
    for (const node of nodes) await deploy(node.client, node.token, archives[0].body);
    const byArm = await runRounds(nodes, count, async (node, round) => {
      await sleep(IDLE_MS);
      const archive = archives[round + 1];
      const res = await deploy(node.client, node.token, archive.body);
      let compressed = 0;
      let bytes = 0;
      let visitMs = 0;
      for (const path of archive.text) {
        const page = await node.client.request({ host: `${res.site}.${SITE_DOMAIN}`, path: `/${path}`, headers: { 'accept-encoding': 'br, gzip' } });
        if (page.headers['content-encoding']) compressed++;
        bytes += page.body.byteLength;
        visitMs += page.ms;
      }
      log(
        `${id} round ${round + 1} ${node.name}: ${Math.round(res.ms)} ms, ${compressed} of ${archive.text.length} text files compressed on the first request, ${bytes} bytes in ${visitMs.toFixed(1)} ms`,
      );
      return { ms: res.ms, compressed, text: archive.text.length, bytes, visitMs };
    });
    rows.push({
      label,
      arms: byArm.map((runs, i) => ({
        name: nodes[i].name,
        ms: summarize(runs.map((r) => r.ms)),
        compressed: runs.map((r) => `${r.compressed}/${r.text}`),
        kb: summarize(runs.map((r) => r.bytes / 1024)),
        visitMs: summarize(runs.map((r) => r.visitMs)),
      })),
      ratio: pairedRatio(
        byArm[0].map((r) => r.ms),
        byArm[1].map((r) => r.ms),
      ),
      byArm,
    });
  }
  writeFileSync(join(work, 'results.json'), JSON.stringify(rows, null, 2));
  const kb = (n) => `${n.toFixed(0)} KB`;
  const out = [
    '| Archive | Variants | Deploy, median (range) | Text files compressed on the first request, per round | Their bytes, median | Their requests one by one, median (range) | Deploy, default ÷ gzip before, median of rounds (range) |',
    '|---|---|--:|---|--:|--:|--:|',
  ];
  for (const row of rows)
    for (const [i, arm] of row.arms.entries())
      out.push(
        `| ${row.label} | ${arm.name} | ${formatSummary(arm.ms, ms)} | ${arm.compressed.join(', ')} | ${kb(arm.kb.median)} | ${formatSummary(arm.visitMs, ms)} | ${i === 0 ? formatSummary(row.ratio, x) : ''} |`,
      );
  process.stdout.write(`${out.join('\n')}\n`);
}

main().then(stopAll, async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
