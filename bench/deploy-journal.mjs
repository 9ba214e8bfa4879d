// What a small deploy's durability costs, in one process (issue 35 §4, sixth pass): 100 blob files
// of a 1 MB site written as the ingest worker writes them (temp file and rename, no fsync), then
// made durable with their revision either as before, a syncfs of the blob filesystem (by the
// kept shell, as the ingest pool runs it) and then the revision's LMDB commit, or with the
// bytes in the commit's own transaction (src/store/blob-journal.ts) and no syncfs. The two ways
// are interleaved, in an order rotated each round; the journal's rows are settled (a syncfs, then
// a transaction dropping them) after each of its rounds, off the clock, as the server does after
// its answer.
//
//   npm run build && node bench/deploy-journal.mjs     # BENCH_JOURNAL_ROUNDS (default 16)
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { createSyncHelper } from '../dist/store/filesystem-sync.js';
import { formatSummary, runRounds, summarize } from './lib/rounds.mjs';

const rounds = Number(process.env.BENCH_JOURNAL_ROUNDS ?? 16);
const root = join(tmpdir(), `plinth-bench-journal-${process.pid}`);
const blobDir = join(root, 'blobs');
for (let i = 0; i < 256; i++) mkdirSync(join(blobDir, i.toString(16).padStart(2, '0')), { recursive: true });
mkdirSync(join(blobDir, 'tmp'));
const env = open(join(root, 'meta'), { maxDbs: 4 });
const paths = env.openDB('paths', {});
const journal = env.openDB('blobJournal', { encoding: 'binary' });
const helper = createSyncHelper();
let written = 0;

/** The 1 MB site's blobs: 40 text files of 10 KB and 60 images of 6.8 KB, new each time. */
function writeSite() {
  const blobs = [];
  for (let i = 0; i < 100; i++) {
    const bytes = randomBytes(i < 40 ? 10_486 : 6_990);
    const sha256 = randomBytes(32).toString('hex');
    const temp = join(blobDir, 'tmp', `${process.pid}-${++written}.tmp`);
    writeFileSync(temp, bytes, { flag: 'wx' });
    renameSync(temp, join(blobDir, sha256.slice(0, 2), sha256));
    blobs.push({ sha256, bytes });
  }
  return blobs;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function measure(arm, round) {
  const blobs = writeSite();
  const revision = `rev_${arm}_${round}`;
  const started = performance.now();
  const cpu = cpuMs();
  if (arm === 'syncfs, then the commit') await helper.sync(blobDir);
  const synced = performance.now();
  await env.transaction(() => {
    for (const blob of blobs) {
      void paths.put([revision, blob.sha256], { sha256: blob.sha256, size: blob.bytes.byteLength, type: 'text/html' });
      if (arm === 'the bytes in the commit') void journal.put([revision, blob.sha256], blob.bytes);
    }
  });
  await env.flushed;
  const result = { ms: performance.now() - started, syncMs: synced - started, commitMs: performance.now() - synced, cpuMs: cpuMs() - cpu };
  if (arm === 'the bytes in the commit') {
    await helper.sync(blobDir);
    await env.transaction(() => blobs.forEach((blob) => void journal.remove([revision, blob.sha256])));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  return result;
}

try {
  const arms = ['syncfs, then the commit', 'the bytes in the commit'];
  const results = await runRounds(arms, rounds, measure);
  const ms = (v) => `${v.toFixed(1)} ms`;
  arms.forEach((arm, i) => {
    const of = (key) => formatSummary(summarize(results[i].map((r) => r[key])), ms);
    console.log(
      `${arm}: ${of('ms')} (syncfs ${of('syncMs')}, commit ${of('commitMs')}), CPU ${of('cpuMs')}; rounds ${results[i].map((r) => Math.round(r.ms)).join(', ')} ms`,
    );
  });
} finally {
  await helper.close();
  await env.close();
  rmSync(root, { recursive: true, force: true });
}
