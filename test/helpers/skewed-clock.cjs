// Test-only: a process whose clock is wrong. Preloaded into a spawned node with
// NODE_OPTIONS="--require <this file>" and TEST_CLOCK_SKEW_MS=<ms ahead, negative for behind>
// (not a PLINTH_* setting: the service knows nothing of it). Every thread of the process,
// HTTP threads and ingest workers alike, runs it, so `Date.now()` is off everywhere.
const skewMs = Number(process.env.TEST_CLOCK_SKEW_MS || 0);
if (skewMs !== 0) {
  const realNow = Date.now;
  Date.now = () => realNow() + skewMs;
}
