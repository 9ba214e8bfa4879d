import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * vitest's global set-up: many tests run the built server, CLI and workers from dist/, so a run
 * first compiles src/ when dist/ is missing or older than it — the same check as `npm start`'s
 * (scripts/build-if-stale.mjs). A test never runs against code older than the tree it tests.
 */
export default function buildDistIfStale(): void {
  const script = fileURLToPath(new URL('../scripts/build-if-stale.mjs', import.meta.url));
  const run = spawnSync(process.execPath, [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) throw new Error(`dist/ is older than src/ and the build failed (exit ${run.status ?? run.signal})`);
}
