// Deploy speed against the floor of `tar xzf` + `sha256sum` on the same archive (issue target:
// at most 2x end to end; the bench checks that). Opt-in and report-only, since timings depend on
// the machine and its load: PLINTH_INGEST_SPEED=1 npx vitest run test/ingest/pool-speed
import { execSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngestPool, type IngestPool } from '../../src/ingest/index.js';
import { tempDir } from '../helpers/sites.js';
import { realisticSite, tarGzWithTool } from '../fixtures/archives.js';

const workerFile = fileURLToPath(new URL('../../dist/ingest/worker.js', import.meta.url));
const MB = 1024 * 1024;

describe.skipIf(!process.env.PLINTH_INGEST_SPEED)('ingest speed', () => {
  let dir: string;
  let pool: IngestPool;
  let archive: string;

  beforeAll(async () => {
    dir = tempDir('plinth-ingest-speed-');
    realisticSite(join(dir, 'site'));
    archive = tarGzWithTool(join(dir, 'site'), join(dir, 'site.tgz'));
    pool = createIngestPool({ maxThreads: 1, maxQueue: 4, idleTimeoutMs: 60_000, workerFile });
  }, 120_000);

  afterAll(async () => {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function floorMs(): number {
    const out = join(dir, `floor-${Date.now()}`);
    mkdirSync(out);
    const start = performance.now();
    execSync(`tar xzf ${archive} -C ${out} && find ${out} -type f -print0 | xargs -0 sha256sum > /dev/null`);
    const ms = performance.now() - start;
    rmSync(out, { recursive: true, force: true });
    return ms;
  }

  let spools = 0;
  async function deployMs(dataDir: string): Promise<number> {
    // The worker deletes the spool file it read, as it does for a request body.
    const spoolPath = join(dir, `spool-${++spools}`);
    copyFileSync(archive, spoolPath);
    const start = performance.now();
    const result = await pool.unpack({
      spoolPath,
      dataDir,
      bodyKind: 'archive',
      limits: { maxFiles: 1000, maxFileBytes: 50 * MB, maxSiteBytes: 90 * MB },
      blockExecutables: false,
    });
    const ms = performance.now() - start;
    expect(result.ok).toBe(true);
    return ms;
  }

  it('reports unpack time of a 1,000-file ~50 MB .tar.gz against tar xzf + sha256sum', async () => {
    await deployMs(join(dir, 'warmup')); // thread start and module load are not per-deploy costs
    const floors: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      floors.push(floorMs());
      const dataDir = join(dir, `data-${i}`);
      cold.push(await deployMs(dataDir));
      warm.push(await deployMs(dataDir));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const report = {
      archiveMB: +(statSync(archive).size / MB).toFixed(1),
      floorMs: Math.round(median(floors)),
      coldStoreMs: Math.round(median(cold)),
      sameFilesAgainMs: Math.round(median(warm)),
    };
    console.log(JSON.stringify(report));
  }, 300_000);
});
