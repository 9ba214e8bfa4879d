import { setFlagsFromString } from 'node:v8';

/**
 * How far a JavaScript heap may grow past what survived its last full collection before the next
 * one: three times (V8's `--heap-growing-percent=200`), for every thread of the process.
 *
 * V8 picks the factor itself from how busy the thread is, often as low as 1.1 for a small heap,
 * and starts a new incremental marking as soon as what is left below the limit is smaller than
 * its young generation. An ingest worker's heap is small (about 15 MB, mostly code) and a large
 * deploy allocates in it steadily, so it stayed in one marking cycle after another: measured on a
 * 300 MB deploy in parts, 40 % of the server's CPU time went to marking, and the deploy took
 * 1.25 times as long (bench/RESULTS.md, "Large sites in parts"). The heaps here are small, and a
 * heap may grow to three times its live size by V8's own choice too, so the cost is memory the
 * threads would mostly take anyway.
 *
 * A factor given on the command line (`node --heap-growing-percent=N dist/main.js`) is kept.
 */
export function setHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  setFlagsFromString('--heap-growing-percent=200');
}
