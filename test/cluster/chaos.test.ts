import { expect, it } from 'vitest';
import { startCluster } from '../helpers/cluster.js';
import { runChaos } from '../reliability/chaos-harness.js';
import { CHAOS_SETTINGS, clusterNodes } from '../reliability/chaos-nodes.js';
import { recordFigures } from '../reliability/figures.js';

/**
 * The chaos run on three nodes sharing one PostgreSQL and one bucket: deploys go to random live
 * nodes while a random node is killed with SIGKILL at a random instant (mid-upload, mid-ingest or
 * commit, as a sweep starts, or again while it starts up), restarted on its own data directory,
 * and every node is checked (see chaos-harness.ts). `npm run test:cluster` runs a short version;
 * `npm run chaos:cluster` sets CHAOS_KILLS/CHAOS_DEPLOYS for the long one (bench/RELIABILITY.md).
 */
const kills = Number(process.env.CHAOS_KILLS ?? 5);
const minDeploys = Number(process.env.CHAOS_DEPLOYS ?? 35);
// A fixed default, so every run of the suite is the same run; CHAOS_SEED explores others.
const seed = Number(process.env.CHAOS_SEED ?? 20261126);

it(
  'of three nodes, any one killed at any instant loses nothing acknowledged, half-publishes nothing, and catches up when it starts again',
  async () => {
    // One HTTP thread a node: three nodes, PostgreSQL and the bucket share this machine's cores.
    const cluster = await startCluster({ count: 3, env: { ...CHAOS_SETTINGS, PLINTH_THREADS: '1' } });
    try {
      const figures = await runChaos({ nodes: clusterNodes(cluster), kills, minDeploys, seed, progress: (line) => console.log(`[chaos:cluster] ${line}`) });
      recordFigures(process.env.CHAOS_KILLS ? 'chaos-cluster' : 'chaos-cluster-fast', { ...figures });
      expect(figures.failures).toEqual([]);
      expect(figures.kills).toBeGreaterThanOrEqual(kills);
      expect(figures.deploysSent).toBeGreaterThanOrEqual(minDeploys);
      expect(figures.leftoversAfterRestart).toBe(0);
    } finally {
      await cluster.stop();
    }
  },
  Number(process.env.CHAOS_TIMEOUT_S ?? 180) * 1000,
);
