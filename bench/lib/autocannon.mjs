// autocannon runner (the suite's generator), programmatic, in this process's main thread.
import autocannon from 'autocannon';

/**
 * Rotations use a prebuilt `requests` array: autocannon builds each request buffer once per
 * connection and then cycles, so the generator does no per-request work beyond sending.
 * Reported rates are autocannon's own per-second sample averages (what its CLI prints).
 */
export async function runAutocannon({ port, seconds, connections, scenario, overallRate, untilStopped, warmupSeconds }) {
  const opts = {
    url: `http://127.0.0.1:${port}${scenario.path ?? '/'}`,
    connections,
    duration: seconds,
    headers: scenario.headers,
  };
  // A fixed offered load (req/s) instead of as fast as possible: latency without saturation.
  if (overallRate) opts.overallRate = overallRate;
  // Connection set-up and the first requests are left out of the statistics.
  if (warmupSeconds) opts.warmup = { connections, duration: warmupSeconds };
  if (scenario.requests) opts.requests = scenario.requests();
  let r;
  if (untilStopped) {
    // Runs until the promise settles (e.g. a deploy finishing) instead of for a fixed time.
    opts.duration = 3600;
    const instance = autocannon(opts);
    await untilStopped;
    instance.stop();
    r = await instance;
  } else {
    r = await autocannon(opts);
  }
  const expected = scenario.expectStatus ?? 200;
  const good = r.statusCodeStats?.[expected]?.count ?? 0;
  const responses = Object.values(r.statusCodeStats ?? {}).reduce((a, s) => a + s.count, 0);
  return {
    requests: r.requests.total,
    seconds: r.duration,
    rps: r.requests.average,
    mbps: r.throughput.average / 1e6,
    // autocannon's latency histogram has 1 ms resolution: sub-ms servers read as 0–1 ms.
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    badStatus: responses - good,
    command: `autocannon -c ${connections} -d ${seconds}${overallRate ? ` --overallRate ${overallRate}` : ''}${Object.entries(scenario.headers ?? {})
      .map(([k, v]) => ` -H '${k}: ${v}'`)
      .join('')}${scenario.requests ? ' (requests: rotation array)' : ''} ${opts.url}`,
  };
}
