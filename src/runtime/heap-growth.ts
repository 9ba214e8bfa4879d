import { setFlagsFromString } from 'node:v8';

/**
 * How far a JavaScript heap may grow past what survived its last full collection before the next
 * one: three times (V8's `--heap-growing-percent=200`), for every thread of the process.
 *
 * V8 picks the factor itself, often close to 1 for a small heap, and an ingest worker's small
 * heap (mostly code) then went from one marking cycle straight into the next while a large deploy
 * ran. docs/architecture.md says why this is set; bench/RESULTS.md has the measurements.
 *
 * A factor given on the command line (`node --heap-growing-percent=N dist/main.js`) is kept.
 */
export function setHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  setFlagsFromString('--heap-growing-percent=200');
}
