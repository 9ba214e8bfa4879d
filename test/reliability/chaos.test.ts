import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/sites.js';
import { runChaos } from './chaos-harness.js';
import { oneNode } from './chaos-nodes.js';
import { recordFigures } from './figures.js';

// `npm test` runs a short version; `npm run chaos` sets CHAOS_KILLS/CHAOS_DEPLOYS for the long one
// (see bench/RELIABILITY.md). CHAOS_SEED replays a run's choice of operations.
const kills = Number(process.env.CHAOS_KILLS ?? 12);
const minDeploys = Number(process.env.CHAOS_DEPLOYS ?? 40);
// A fixed default, so every run of the suite is the same run; CHAOS_SEED explores others.
const seed = Number(process.env.CHAOS_SEED ?? 20261125);

it(
  'loses nothing acknowledged and half-publishes nothing when killed at any instant',
  async () => {
    const dataDir = tempDir('plinth-chaos-');
    const figures = await runChaos({ nodes: oneNode(dataDir), kills, minDeploys, seed, progress: (line) => console.log(`[chaos] ${line}`) });
    rmSync(dataDir, { recursive: true, force: true });
    recordFigures(process.env.CHAOS_KILLS ? 'chaos' : 'chaos-fast', { ...figures });
    expect(figures.failures).toEqual([]);
    expect(figures.kills).toBeGreaterThanOrEqual(kills);
    expect(figures.deploysSent).toBeGreaterThanOrEqual(minDeploys);
    expect(figures.leftoversAfterRestart).toBe(0);
  },
  Number(process.env.CHAOS_TIMEOUT_S ?? 240) * 1000,
);
