// Prints the per-slice CPU timelines that `CLUSTER_TIMELINE=<file> node bench/cluster.mjs` wrote
// (one JSON line per timed archive deploy on cluster node A: the 1,000-file site, and the 100-file
// one with CLUSTER_TIMELINE_SITES=small,big): for each slice, the CPU of the node's main thread,
// its ingest worker (nice > 0), its other threads (among them the HTTP thread: HTTP threads are
// worker threads), s3rver and PostgreSQL, what the machine's cores left idle, the worker's wait
// for a core, and the PUTs in flight.
//
// Usage: node bench/timeline.mjs <timeline file> [events file] [round, default: all]
// The events file is optional: JSON lines { t: epoch ms, e: name, ... } from an instrumented build
// (when the worker announced each blob, each pack's PUT, each SQL statement); each is printed in
// the slice it falls in, counted where there are many of one name.
import { readFileSync } from 'node:fs';
import os from 'node:os';

const [file, eventsFile, only] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/timeline.mjs <timeline file> [events file] [round]');
  process.exit(2);
}
const cores = os.availableParallelism();
const lines = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
const runs = lines(file);
const events = eventsFile && eventsFile !== '-' ? lines(eventsFile) : [];

for (const [round, run] of runs.entries()) {
  if (only !== undefined && Number(only) !== round) continue;
  const roleOf = (id) => {
    const t = run.threads[id];
    if (t.pid === run.roles.node) return t.tid === t.pid ? 'main' : t.nice > 0 ? 'worker' : 'other';
    return t.pid === run.roles.s3rver ? 's3rver' : 'pg';
  };
  const roles = ['main', 'worker', 'other', 's3rver', 'pg'];
  const total = Object.fromEntries(roles.map((r) => [r, 0]));
  let idleTotal = 0;
  let waitTotal = 0;
  const end = run.startedAt + run.ms;
  console.log(`\nround ${round}${run.site ? ` (${run.site} site)` : ''}: ${Math.round(run.ms)} ms to the 201; ${run.puts.length} PUTs`);
  console.log(`  from  to(ms)   main worker  other s3rver     pg | idle wait(worker) PUTs | events`);
  for (let i = 1; i < run.samples.length; i++) {
    const a = run.samples[i - 1];
    const b = run.samples[i];
    const slice = b.at - a.at;
    if (slice <= 0) continue;
    const cpu = Object.fromEntries(roles.map((r) => [r, 0]));
    let wait = 0;
    for (const [id, [ns, waitNs]] of Object.entries(b.cpu)) {
      const before = a.cpu[id] ?? [ns, waitNs];
      const role = roleOf(id);
      cpu[role] += (ns - before[0]) / 1e6;
      if (role === 'worker') wait += (waitNs - before[1]) / 1e6;
    }
    const busy = roles.reduce((sum, r) => sum + cpu[r], 0);
    const idle = Math.max(0, cores * slice - busy);
    const counted = b.at <= end;
    if (counted) {
      for (const r of roles) total[r] += cpu[r];
      idleTotal += idle;
      waitTotal += wait;
    }
    const from = a.at - run.startedAt;
    const to = b.at - run.startedAt;
    const inFlight = run.puts.filter((p) => p.at < to && p.end > from).length;
    const here = events.filter((e) => e.t >= a.at && e.t < b.at);
    const byName = new Map();
    for (const e of here) byName.set(e.e, (byName.get(e.e) ?? 0) + 1);
    const said = [...byName].map(([name, n]) => (n > 1 ? `${name}×${n}` : name)).join(' ');
    const f = (n) => n.toFixed(0).padStart(6);
    console.log(
      `${f(from)}${f(to)} ${roles.map((r) => f(cpu[r])).join(' ')} | ${f(idle)} ${f(wait)} ${String(inFlight).padStart(4)} | ${counted ? '' : '(after the 201) '}${said}`,
    );
  }
  const spent = roles.reduce((sum, r) => sum + total[r], 0);
  console.log(
    `  up to the 201: ${roles.map((r) => `${r} ${Math.round(total[r])}`).join(', ')} ms; CPU ÷ wall ${(spent / run.ms).toFixed(2)}; idle ${Math.round(idleTotal)} core-ms; worker waiting ${Math.round(waitTotal)} ms`,
  );
}
