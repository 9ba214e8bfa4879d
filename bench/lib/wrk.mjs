// wrk runner: keep-alive, one thread, N connections; parses its text report.
import { join } from 'node:path';
import { runCapture } from './proc.mjs';

const TIME_UNITS = { us: 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
const BYTE_UNITS = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

const toMs = (v, unit) => Math.round(Number(v) * TIME_UNITS[unit] * 1e6) / 1e6;

/** Parses wrk --latency output into the bench's common result shape (latencies in ms). */
export function parseWrk(text) {
  const num = (re) => re.exec(text);
  const lat = (pct) => {
    const m = num(new RegExp(`^\\s+${pct}%\\s+([\\d.]+)(us|ms|s|m|h)`, 'm'));
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const total = num(/(\d+) requests in ([\d.]+)(us|ms|s|m|h), ([\d.]+)(B|KB|MB|GB|TB) read/);
  if (!total) throw new Error(`cannot parse wrk output:\n${text}`);
  const seconds = toMs(total[2], total[3]) / 1000;
  const bytes = Number(total[4]) * BYTE_UNITS[total[5]];
  const sock = num(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  const badStatus = Number(num(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  return {
    requests: Number(total[1]),
    seconds,
    rps: Number(num(/Requests\/sec:\s+([\d.]+)/)[1]),
    mbps: bytes / seconds / 1e6,
    p50: lat(50),
    p99: lat(99),
    errors: socketErrors,
    badStatus,
  };
}

/** Builds the wrk argv for a scenario (see serve.mjs for the scenario shape). */
export function wrkArgs({ port, seconds, connections, scenario, benchDir }) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  const url = `http://127.0.0.1:${port}${scenario.path ?? '/'}`;
  if (scenario.wrkScript) {
    args.push('-s', join(benchDir, 'wrk', scenario.wrkScript.file), url, '--', ...scenario.wrkScript.args);
  } else {
    for (const [k, v] of Object.entries(scenario.headers)) args.push('-H', `${k}: ${v}`);
    args.push(url);
  }
  return args;
}

/**
 * Runs wrk for `seconds`, or, with `untilStopped`, until that promise settles: wrk prints its
 * full report when interrupted, so a window can follow an event (a deploy) instead of a clock.
 */
export async function runWrk(opts) {
  const args = wrkArgs(opts.untilStopped ? { ...opts, seconds: 3600 } : opts);
  const [file, argv] = opts.cpus ? ['taskset', ['-c', opts.cpus, 'wrk', ...args]] : ['wrk', args];
  const { code, stdout, stderr } = await runCapture(file, argv, { until: opts.untilStopped });
  if (code !== 0) throw new Error(`wrk exited ${code}: ${stderr || stdout}`);
  return { ...parseWrk(stdout), command: `${opts.cpus ? `taskset -c ${opts.cpus} ` : ''}wrk ${args.map(shellQuote).join(' ')}`, raw: stdout };
}

export function shellQuote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
