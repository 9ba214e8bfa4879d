// How long `plinth admin backup` and `restore` take for a data directory of N sites (default
// 10,000), with the server running on it. Usage: npm run bench:backup [-- --sites 10000]
// Result: bench/results/backup-<N>.json and a line for bench/RELIABILITY.md.
// It compares nothing (a backup and a restore are two operations, not alternatives), so it
// measures each once rather than in interleaved rounds (lib/rounds.mjs).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { openStore } from '../dist/store/index.js';
import { contentTypeFor } from '../dist/rules/index.js';
import { freePort, startChild, stopChild, waitReady } from './lib/proc.mjs';

const { values } = parseArgs({ options: { sites: { type: 'string', default: '10000' } } });
const SITES = Number(values.sites);
const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'plinth-bench-backup-'));
const dataDir = join(work, 'data');
const backupDir = join(work, 'backup');
const restoredDir = join(work, 'restored');

// A small deterministic generator: sites of 4-9 files, HTML and CSS text, some images, a few
// assets shared by many sites (as template sites share a framework), about 60 KB per site.
let state = 12345;
const rand = () => (state = (state * 1103515245 + 12345) >>> 0) / 4294967296;
const text = (bytes, tag) => Buffer.from(`<!-- ${tag} -->\n${'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27))}`.slice(0, bytes));
const shared = Array.from({ length: 20 }, (_, i) => text(30_000, `framework-${i}`));

function siteFiles(i) {
  const files = [
    ['index.html', text(2000 + Math.floor(rand() * 8000), `site ${i}`)],
    ['css/theme.css', shared[i % shared.length]],
  ];
  const extra = 2 + Math.floor(rand() * 6);
  for (let f = 0; f < extra; f++) {
    if (rand() < 0.4) files.push([`img/p${f}.jpg`, randomBytes(2000 + Math.floor(rand() * 30_000))]);
    else files.push([`pages/p${f}.html`, text(500 + Math.floor(rand() * 6000), `site ${i} page ${f}`)]);
  }
  return files;
}

async function populate() {
  const store = openStore({ dir: dataDir });
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < SITES) {
      const i = next++;
      const rows = new Map();
      for (const [path, bytes] of siteFiles(i)) rows.set(path, await store.blobs.putFile(bytes, contentTypeFor(path), { compress: false, durable: false }));
      const name = `bench-site-${i}`;
      const result = await store.commitRevision({
        site: name,
        create: { name, plan: 'builder', claimed: true },
        baseRevision: null,
        files: rows,
        kind: 'deploy',
        createdBy: 'admin',
      });
      if (!result.ok) throw new Error(result.reason);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  await store.blobs.flush();
  await store.close();
  return Math.round(performance.now() - started);
}

function plinth(env, ...args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    execFile(
      process.execPath,
      [join(root, 'dist/cli/plinth.js'), 'admin', ...args],
      { env: { ...process.env, ...env }, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${args.join(' ')} failed: ${stderr}`));
        else resolve({ ms: Math.round(performance.now() - started), report: JSON.parse(stdout) });
      },
    );
  });
}

mkdirSync(dataDir, { recursive: true });
console.log(`populating ${SITES} sites in ${dataDir} …`);
const populateMs = await populate();

// The server runs on the data directory throughout, as in production.
const port = await freePort();
const server = startChild(process.execPath, [join(root, 'dist/main.js')], {
  env: { PLINTH_PORT: String(port), PLINTH_DATA_DIR: dataDir, PLINTH_LISTEN_HOST: '127.0.0.1', PLINTH_LOG_LEVEL: 'warn' },
  logPath: join(work, 'server.log'),
});
try {
  await waitReady(server, port, 'bench-site-0.sites.localhost');
  const backup = await plinth({ PLINTH_DATA_DIR: dataDir }, 'backup', backupDir);
  const restore = await plinth({ PLINTH_DATA_DIR: restoredDir }, 'restore', backupDir);
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    sites: SITES,
    populateMs,
    backup: { wallMs: backup.ms, ...backup.report },
    restore: { wallMs: restore.ms, ...restore.report },
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, `bench/results/backup-${SITES}.json`), `${JSON.stringify(result, null, 2)}\n`);
  const mb = (bytes) => (bytes / 1048576).toFixed(0);
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `| ${SITES} sites, ${backup.report.blobs} blobs, ${mb(backup.report.blobBytes)} MB + ${mb(backup.report.lmdbBytes)} MB index | backup ${(backup.ms / 1000).toFixed(1)} s | restore ${(restore.ms / 1000).toFixed(1)} s |`,
  );
} finally {
  await stopChild(server);
  rmSync(work, { recursive: true, force: true });
}
