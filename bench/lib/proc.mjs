// Child-process plumbing for the bench: free ports, start/stop by PID, readiness polls, RSS.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export const LOOPBACK = '127.0.0.1';

/** Asks the kernel for a free loopback port (tiny race until the child binds it; fine for a bench). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Spawns a child whose stdout/stderr go to `logPath` (pinned to `cpus`, a taskset list, if given). */
export function startChild(cmd, args, { env, cwd, logPath, cpus }) {
  const fd = openSync(logPath, 'a');
  // taskset execs the command, so the PID stays the server's own.
  const [file, argv] = cpus ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args];
  const child = spawn(file, argv, { env: { ...process.env, ...env }, cwd, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.exitInfo = null;
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      child.exitInfo = { code, signal };
      resolve(child.exitInfo);
    });
  });
  return child;
}

/** SIGTERM by PID, SIGKILL after `graceMs`; only ever our own child. */
export async function stopChild(child, graceMs = 5000) {
  if (!child || child.exitInfo) return;
  process.kill(child.pid, 'SIGTERM');
  const done = await Promise.race([child.exited, sleep(graceMs).then(() => null)]);
  if (!done && !child.exitInfo) {
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
  }
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: LOOPBACK, port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** One request to loopback with an explicit Host header; resolves {status, headers, rawHeaders, body}. */
export function httpGet(port, host, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: LOOPBACK, port, path, method: 'GET', headers: { host, ...headers }, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, statusMessage: res.statusMessage, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * One API or page request to loopback with an explicit Host header (fetch would drop it): an
 * optional bearer token and JSON body; resolves {status, text, headers}.
 */
export function httpCall(port, host, method, path, token, body, extra = {}) {
  return new Promise((resolve, reject) => {
    const headers = { host, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...extra };
    const req = http.request({ host: LOOPBACK, port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls until the port accepts AND `GET path` with `host` answers 200, or throws after `timeoutMs`. */
export async function waitReady(child, port, host, path = '/', timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no connection';
  while (Date.now() < deadline) {
    if (child?.exitInfo) throw new Error(`process exited before it was ready (${JSON.stringify(child.exitInfo)})`);
    if (await canConnect(port)) {
      try {
        const res = await httpGet(port, host, path);
        if (res.status === 200) return;
        last = `status ${res.status}`;
      } catch (err) {
        last = err.message;
      }
    }
    await sleep(100);
  }
  throw new Error(`not ready on port ${port} after ${timeoutMs} ms (${last})`);
}

/** VmRSS and VmHWM (peak) of a PID in bytes, from /proc; covers all its threads. */
export function readMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * CPU time (user + system) a PID has used so far, all its threads, in ms, from /proc/<pid>/stat.
 * The kernel counts in clock ticks (10 ms at the usual 100 Hz), so measure over seconds.
 */
export function cpuTimeMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

const CLOCK_TICKS_PER_S = 100;

/**
 * CPU time of each thread of a process, in nanoseconds, by thread id: the first field of
 * /proc/<pid>/task/<tid>/schedstat. `cpuTimeMs` counts 10 ms clock ticks, which at a few thousand
 * requests per second is microseconds per request of rounding; this is exact.
 */
export function threadCpuNs(pid) {
  const byThread = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      byThread.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended after the listing.
    }
  }
  return byThread;
}

/**
 * Each thread's CPU so far (ns, as `threadCpuNs`), its time runnable but waiting for a core
 * (`waitNs`, the second field of schedstat) and its nice value, by thread id, over the given
 * processes (gone ones skipped): a deploy's ingest worker runs at a nice value of its own, which
 * tells it apart from the node's other threads.
 */
export function threadsOf(pids) {
  const threads = new Map();
  for (const pid of pids) {
    let tids;
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        // On the CPU, and runnable but waiting for a core (ns).
        const [ns, waitNs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // Field 19 is the nice value; fields are counted after the name, which may hold spaces.
        const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        threads.set(`${pid}/${tid}`, { pid: Number(pid), tid: Number(tid), ns, waitNs, nice });
      } catch {
        // The thread ended after the listing.
      }
    }
  }
  return threads;
}

/** The direct children of a process, by PID, from /proc (field 4 of /proc/<pid>/stat). */
export function childrenOf(parent) {
  const children = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) children.push(Number(name));
    } catch {
      // Gone after the listing.
    }
  }
  return children;
}

/**
 * Each thread of a process by thread id: CPU so far (ns) and timeslices (schedstat's third field:
 * how many times it was put on a core, so its wake-ups and preemptions), for telling apart where
 * a process spends its CPU beside the thread that serves.
 */
export function threadSlices(pid) {
  const byThread = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [ns, , slices] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      byThread.set(Number(tid), { ns, slices });
    } catch {
      // The thread ended after the listing.
    }
  }
  return byThread;
}

/** Nanoseconds of CPU between two `threadCpuNs` readings (a thread that ended in between takes its time with it). */
export function cpuNsBetween(before, after) {
  let total = 0;
  for (const [tid, ns] of after) total += ns - (before.get(tid) ?? 0);
  return total;
}

/** Samples RSS every `everyMs` until stopped; returns {maxRss, hwm, last}. */
export function sampleMemory(pid, everyMs = 500) {
  let maxRss = 0;
  let last = { rss: NaN, hwm: NaN };
  const take = () => {
    try {
      last = readMemory(pid);
      maxRss = Math.max(maxRss, last.rss);
    } catch {
      /* process gone */
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { maxRss, hwm: last.hwm, last: last.rss };
    },
  };
}

/**
 * Runs a command to completion, capturing stdout+stderr (for wrk and version probes). With
 * `until`, the command is interrupted (SIGINT) once that promise settles, and an exit by that
 * signal counts as code 0: wrk prints its full report when interrupted.
 */
export function runCapture(cmd, args, { until, ...opts } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.once('error', reject);
    // 'close', not 'exit': the output may still be in the pipes when the process has exited (wrk's
    // whole report, on a loaded machine), and 'close' comes once they are read to the end.
    child.once('close', (code, signal) => resolve({ code: until && signal === 'SIGINT' ? 0 : code, stdout: out, stderr: err }));
    if (until) {
      const stop = () => child.kill('SIGINT');
      until.then(stop, stop);
    }
  });
}

/**
 * Installs the reference servers and wrk from Debian packages when one is missing (the bench
 * needs them side by side in the same run). Needs root, as on the benchmark machines.
 */
export async function ensureTools(commands = { nginx: 'nginx', lighttpd: 'lighttpd', wrk: 'wrk' }) {
  const missing = [];
  for (const [command, pkg] of Object.entries(commands)) {
    const { code } = await runCapture('sh', ['-c', `command -v ${command}`]);
    if (code !== 0) missing.push(pkg);
  }
  if (missing.length === 0) return;
  console.log(`[bench] installing ${missing.join(', ')} (apt-get)`);
  const run = (args) => runCapture('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  let result = await run(['install', '-y', '--no-install-recommends', ...missing]);
  if (result.code !== 0) {
    await run(['update']);
    result = await run(['install', '-y', '--no-install-recommends', ...missing]);
  }
  if (result.code !== 0)
    throw new Error(
      `could not install ${missing.join(', ')}: ${result.stderr.slice(-500)}\nInstall them (apt-get install -y ${missing.join(' ')}) and run again.`,
    );
}
