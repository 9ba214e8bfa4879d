// What one PUT of a small blob costs in CPU, this process's and s3rver's apart: the AWS SDK's
// PutObject (set up as src/store/bucket.ts set it up before) against the bucket's direct client
// (bucket-http.ts, through createS3Bucket's upload), the same bytes to the same s3rver, 32 at once
// as a deploy sends them. Arms alternate in rotated order every round (lib/rounds.mjs); figures
// are medians of the rounds with their range. Needs `npm run build`.
//
// Env: PUT_COUNT (PUTs per arm and round, 400), PUT_BYTES (4096), PUT_ROUNDS (6).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createS3Bucket } from '../dist/store/bucket.js';
import { startS3rver } from './lib/s3rver.mjs';
import { cpuTimeMs } from './lib/proc.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';

const count = Number(process.env.PUT_COUNT ?? 400);
const bytes = Number(process.env.PUT_BYTES ?? 4096);
const rounds = Number(process.env.PUT_ROUNDS ?? 6);
const CONCURRENCY = 32;

const s3 = await startS3rver('plinth-put');
const dir = mkdtempSync(join(tmpdir(), 'plinth-put-'));
const options = s3.options();
const direct = createS3Bucket(options);
const sdk = new S3Client({
  region: s3.region,
  endpoint: s3.endpoint,
  forcePathStyle: true,
  credentials: s3.credentials,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
  requestHandler: { connectionTimeout: 3000, socketTimeout: 15_000 },
  cacheMiddleware: true,
});

/** `count` new blobs on disk: [key, path, size]. */
function blobs() {
  return Array.from({ length: count }, () => {
    const body = randomBytes(bytes);
    const sha = createHash('sha256').update(body).digest('hex');
    const path = join(dir, sha);
    writeFileSync(path, body);
    return [`blobs/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`, path, body.byteLength];
  });
}

const put = {
  sdk: (key, path) => sdk.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: readFileSync(path), ContentLength: bytes })),
  direct: (key, path, size) => direct.upload(key, path, size),
};

async function measure(arm) {
  const work = blobs();
  const server = s3.pid();
  const serverBefore = cpuTimeMs(server);
  const before = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < work.length) await put[arm](...work[next++]);
    }),
  );
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  return {
    clientMs: (used.user + used.system) / 1000 / count,
    serverMs: (cpuTimeMs(server) - serverBefore) / count,
    perSecond: count / (wallMs / 1000),
  };
}

const arms = ['sdk', 'direct'];
await runRounds(arms, 1, measure); // warm-up: connections, JIT
const results = await runRounds(arms, rounds, measure);
const ms = (v) => `${v.toFixed(2)} ms`;
const rate = (v) => `${Math.round(v)}/s`;
console.log(`${count} PUTs of ${bytes} B per arm and round, ${CONCURRENCY} at once, ${rounds} rounds; medians (range)`);
console.log('| Client | Client CPU per PUT | s3rver CPU per PUT | PUTs per second |');
console.log('|---|--:|--:|--:|');
for (const [i, arm] of arms.entries()) {
  const r = results[i];
  console.log(
    `| ${arm === 'sdk' ? 'AWS SDK PutObject' : 'direct (bucket-http.ts)'} | ${formatSummary(summarize(r.map((x) => x.clientMs)), ms)} | ${formatSummary(summarize(r.map((x) => x.serverMs)), ms)} | ${formatSummary(summarize(r.map((x) => x.perSecond)), rate)} |`,
  );
}
const ratio = pairedRatio(
  results[1].map((x) => x.clientMs),
  results[0].map((x) => x.clientMs),
);
console.log(`direct ÷ SDK, client CPU per PUT, median of rounds: ${formatSummary(ratio, (v) => `${v.toFixed(2)}×`)}`);
direct.close();
sdk.destroy();
await s3.stop();
rmSync(dir, { recursive: true, force: true });
