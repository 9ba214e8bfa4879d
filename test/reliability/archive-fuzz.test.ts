import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkArchivePath } from '../../src/ingest/archive-path.js';
import { createIngestPool, type UnpackResult } from '../../src/ingest/index.js';
import { openBlobStore, type BlobStore } from '../../src/store/index.js';
import { isSkippedPath } from '../../src/rules/index.js';
import { builtWorker } from '../fixtures/ingest-pool.js';
import { api } from '../api/api-helpers.js';
import { deployTo } from '../helpers/deploy-client.js';
import { request } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';
import { mutatedCase, type FuzzCase } from './archive-mutations.js';
import { recordFigures } from './figures.js';
import { randomSource } from './site-model.js';

// Mutation fuzzing of tar, tgz and zip deploys through the real ingest pool (the built worker):
// every case must end in a SPEC error or a clean result (safe paths, whole blobs), never in a
// crash, a hang or a path outside the site. FUZZ_SEED replays a run; FUZZ_CASES sizes it.
const seed = Number(process.env.FUZZ_SEED ?? 20261123);
const cases = Number(process.env.FUZZ_CASES ?? 10_000);
const httpCases = Number(process.env.FUZZ_HTTP_CASES ?? 300);
// Far above any case's real time, well below PLINTH_UPLOAD_TIMEOUT_S: past it, a case counts as a hang.
const HANG_MS = 15_000;
const SPEC_CODES = new Set(['bad_request', 'too_large', 'blocked_secret']);
const figures: Record<string, unknown> = { seed };
afterAll(() => recordFigures('archive-fuzz', figures));

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** What is wrong with one outcome, or undefined. */
function judge(outcome: UnpackResult, blobs: BlobStore): string | undefined {
  if (!outcome.ok) {
    if (!SPEC_CODES.has(outcome.error.code) || typeof outcome.error.message !== 'string' || outcome.error.message === '') {
      return `not a SPEC error: ${JSON.stringify(outcome.error)}`;
    }
    return undefined;
  }
  for (const file of outcome.files) {
    const checked = checkArchivePath(file.path);
    if (!checked.ok || checked.path !== file.path) return `unsafe path published: ${JSON.stringify(file.path)}`;
    if (isSkippedPath(file.path)) return `skipped path published: ${file.path}`;
    const path = blobs.pathOf(file.sha256);
    if (!existsSync(path) || statSync(path).size !== file.size) return `blob of ${file.path} missing or of the wrong size`;
    if (sha256(readFileSync(path)) !== file.sha256) return `blob of ${file.path} does not match its hash`;
  }
  return undefined;
}

describe('mutated archives', () => {
  it(`never crash, hang or escape the site over ${cases} seeded cases`, async () => {
    const dir = tempDir('plinth-fuzz-');
    const dataDir = join(dir, 'data');
    const pool = createIngestPool({ maxThreads: 2, maxQueue: 64, idleTimeoutMs: 10_000, workerFile: builtWorker });
    const blobs = openBlobStore({ dir: dataDir });
    const random = randomSource(seed);
    const outcomes: Record<string, number> = {};
    const byKind: Record<string, number> = {};
    const failures: string[] = [];
    const durations: number[] = [];
    const started = performance.now();
    let next = 0;

    const run = async (index: number, fuzz: FuzzCase): Promise<void> => {
      const spoolPath = join(dir, `${index}.spool`);
      writeFileSync(spoolPath, fuzz.bytes);
      const t0 = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), HANG_MS)));
      try {
        const outcome = await Promise.race([
          pool.unpack({
            spoolPath,
            dataDir,
            bodyKind: 'archive',
            limits: { maxFiles: 100, maxFileBytes: 1024 * 1024, maxSiteBytes: 5 * 1024 * 1024 },
            blockExecutables: index % 2 === 0,
          }),
          hang,
        ]);
        if (outcome === 'hang') {
          failures.push(`case ${index} (${fuzz.kind} ${fuzz.mutations.join('+')}) ran past ${HANG_MS} ms`);
          return;
        }
        durations.push(performance.now() - t0);
        const key = outcome.ok ? 'published' : outcome.error.code;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        const wrong = judge(outcome, blobs);
        if (wrong) failures.push(`case ${index} (${fuzz.kind} ${fuzz.mutations.join('+')}): ${wrong}`);
      } catch (err) {
        failures.push(`case ${index} (${fuzz.kind} ${fuzz.mutations.join('+')}) crashed: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    };

    // The generator runs in one order whatever the scheduling, so a seed always means the same cases.
    const all = Array.from({ length: cases }, () => mutatedCase(random));
    for (const fuzz of all) byKind[fuzz.kind] = (byKind[fuzz.kind] ?? 0) + 1;
    const lane = async (): Promise<void> => {
      while (next < all.length) {
        const index = next++;
        await run(index, all[index]!);
      }
    };
    try {
      await Promise.all(Array.from({ length: 8 }, lane));
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
    durations.sort((a, b) => a - b);
    Object.assign(figures, {
      cases,
      byKind,
      outcomes,
      failures: failures.length,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      caseMs: {
        p50: Math.round(durations[Math.floor(durations.length / 2)]! * 10) / 10,
        p99: Math.round(durations[Math.floor(durations.length * 0.99)]! * 10) / 10,
        max: Math.round(durations[durations.length - 1]!),
      },
    });
    expect(failures.slice(0, 20)).toEqual([]);
    // The mutations must not all be caught by one early check: some cases still publish.
    expect(outcomes.published ?? 0).toBeGreaterThan(cases / 50);
    expect(outcomes.bad_request ?? 0).toBeGreaterThan(cases / 10);
  }, 600_000);

  it(`answer every one of ${httpCases} deploys over HTTP with a SPEC error or a site that serves what was stored`, async () => {
    const server = await startTestServer();
    const random = randomSource(seed + 1);
    const statuses: Record<number, number> = {};
    const failures: string[] = [];
    try {
      for (let i = 0; i < httpCases; i++) {
        const fuzz = mutatedCase(random);
        const answer = await deployTo(server.port, { body: fuzz.bytes });
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const label = `case ${i} (${fuzz.kind} ${fuzz.mutations.join('+')})`;
        if (answer.status === 201) {
          const name: string = answer.json.site.name;
          const listing = await api(server, { path: `/v1/sites/${name}/files`, token: answer.json.site_token });
          for (const file of listing.json.files as Array<{ path: string; sha256: string }>) {
            const page = await request({
              port: server.port,
              host: `${name}.sites.localhost`,
              path: `/${file.path.split('/').map(encodeURIComponent).join('/')}`,
            });
            if (page.status !== 200) failures.push(`${label}: ${file.path} answered ${page.status}`);
            // HTML gets the badge; every other file is served byte for byte.
            else if (!file.path.endsWith('.html') && sha256(page.body) !== file.sha256) failures.push(`${label}: ${file.path} served other bytes`);
          }
        } else if ([400, 413, 422].includes(answer.status)) {
          if (!SPEC_CODES.has(answer.json?.error?.code) || typeof answer.json.error.message !== 'string')
            failures.push(`${label}: ${answer.status} without the SPEC error shape`);
        } else {
          failures.push(`${label}: answered ${answer.status} ${answer.text.slice(0, 200)}`);
        }
      }
    } finally {
      await server.close();
    }
    figures.http = { cases: httpCases, statuses, failures: failures.length };
    expect(failures.slice(0, 20)).toEqual([]);
  }, 300_000);
});
