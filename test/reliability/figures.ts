import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the reliability tests write what they measured (kills, checks, bytes, timings, RSS): one
 * JSON file per test, `<name>.json`, in `$RELIABILITY_OUT` (`npm run chaos` and `npm run soak`
 * point it at bench/results/) or a temp folder, so `npm test` never dirties the work tree.
 * bench/RELIABILITY.md reports these figures.
 */
export function figuresDir(): string {
  return process.env.RELIABILITY_OUT || join(tmpdir(), 'plinth-reliability');
}

export function recordFigures(name: string, figures: Record<string, unknown>): void {
  const dir = figuresDir();
  mkdirSync(dir, { recursive: true });
  // The machine too: figures of several machines end up side by side in bench/RELIABILITY.md.
  const machine = `${availableParallelism()} cores, ${cpus()[0]?.model.trim() ?? 'CPU not reported'}`;
  const record = { test: name, at: new Date().toISOString(), node: process.version, machine, ...figures };
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`[reliability] ${name}: ${JSON.stringify(figures)}`);
}
