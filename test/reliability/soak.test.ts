import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/sites.js';
import { recordFigures } from './figures.js';
import { runSoak, type SoakSample } from './soak-harness.js';

// `npm test` runs 60 s of load; `npm run soak` sets SOAK_SECONDS=600 (see bench/RELIABILITY.md).
const durationS = Number(process.env.SOAK_SECONDS ?? 60);
const full = durationS >= 300;

const mean = (samples: SoakSample[], pick: (s: SoakSample) => number): number => samples.reduce((sum, s) => sum + pick(s), 0) / Math.max(1, samples.length);

it(
  `serves mixed load for ${durationS} s with no failure and flat memory and descriptors`,
  async () => {
    const dataDir = tempDir('plinth-soak-');
    const figures = await runSoak({ dataDir, durationS, visitsPerSecond: full ? 600 : 400, progress: (line) => console.log(`[soak] ${line}`) });
    rmSync(dataDir, { recursive: true, force: true });
    // Windows compared: the full run compares its last minute with its second minute; the short
    // one its last third with its middle third (the first part holds warm-up: caches, JIT, pools).
    const at = (from: number, to: number): SoakSample[] => figures.samples.filter((s) => s.atS > from && s.atS <= to);
    const early = full ? at(60, 120) : at(durationS / 3, (2 * durationS) / 3);
    const late = full ? at(durationS - 60, durationS) : at((2 * durationS) / 3, durationS);
    const rssGrowth = mean(late, (s) => s.rssBytes) / mean(early, (s) => s.rssBytes) - 1;
    const fdGrowth = mean(late, (s) => s.openFds) - mean(early, (s) => s.openFds);
    recordFigures(full ? 'soak' : 'soak-fast', { ...figures, rssGrowth: Math.round(rssGrowth * 1000) / 1000, fdGrowth });

    expect(figures.failureExamples).toEqual([]);
    expect(figures.serverErrors).toBe(0);
    // One deploy a second, each waited for: a slow one delays the next.
    expect(figures.requests.deploys).toBeGreaterThanOrEqual(durationS * 0.9);
    expect(rssGrowth).toBeLessThan(full ? 0.1 : 0.25);
    expect(Math.abs(fdGrowth)).toBeLessThanOrEqual(full ? 0.1 * mean(early, (s) => s.openFds) : 20);
    expect(figures.swept.prunedRevisions).toBeGreaterThan(0);
    // Blobs of pruned revisions go once they are older than the 60 s grace period.
    if (durationS > 90) expect(figures.swept.deletedBlobFiles).toBeGreaterThan(0);
  },
  (durationS + 120) * 1000,
);
