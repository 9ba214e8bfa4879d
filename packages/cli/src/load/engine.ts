import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createAgent } from './client.js';
import type { Corpus } from './corpus.js';
import { startDeploys, type DeployEvent } from './deploys.js';
import { percentilesMs } from './histogram.js';
import type { FromGenerator, GeneratorSetup, ToGenerator } from './messages.js';
import type { TrafficMix } from './mix.js';
import { planRounds } from './rounds.js';
import { emptyTally, errorCount, mergeTally, type Tally } from './tally.js';
import { trafficSites } from './traffic.js';

/**
 * A run: one generator thread per core (by default), the rounds in turn across the targets, the
 * deploys alongside, and everything the threads counted gathered per target, per round and per
 * second, with what the generator itself cost.
 */
export interface RunOptions {
  corpus: Corpus;
  /** `HOST:PORT` addresses to send to, in turn; empty: each site's own address. */
  targets: Array<{ label: string; origin?: string }>;
  mode: 'open' | 'closed';
  rate: number;
  connections: number;
  durationMs: number;
  roundMs?: number;
  threads?: number;
  mix: TrafficMix;
  zipfExponent: number;
  seed: number;
  checkShare: number;
  timeoutMs: number;
  deploys?: { perMinute: number; api: string; token: string; hotSites: number };
  /** Called about once a second with what the last full second looked like. */
  progress?: (line: ProgressLine) => void;
  /** The built generator thread (default: worker.js next to this module). */
  workerFile?: URL;
}

export interface ProgressLine {
  elapsedS: number;
  durationS: number;
  target: string;
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
}

export interface RoundResult {
  index: number;
  target: string;
  started_s: number;
  ended_s: number;
  requests: number;
  requests_per_second: number;
}

export interface ThreadResult {
  thread: number;
  requests: number;
  event_loop_utilization: number;
  send_lag_p99_ms: number;
}

export interface RunResult {
  startedAt: number;
  elapsedMs: number;
  targets: Array<{ label: string; tally: Tally; activeMs: number }>;
  overall: Tally;
  rounds: RoundResult[];
  threads: ThreadResult[];
  /** Second → target → tally. */
  timeline: Array<{ second: number; target: string; tally: Tally }>;
  deploys: DeployEvent[];
  /** CPU time of this process (all its threads) over the run, in ms. */
  cpuMs: number;
  cores: number;
}

export async function runLoad(options: RunOptions): Promise<RunResult> {
  const cores = availableParallelism();
  const threads = Math.max(1, options.threads ?? cores);
  const sites = trafficSites(options.corpus);
  const startedAt = Date.now();
  const cpuBefore = process.cpuUsage();
  const workers: Worker[] = [];
  const perThread = (total: number, index: number): number => Math.floor(total / threads) + (index < total % threads ? 1 : 0);
  const timeline = new Map<string, { second: number; target: string; tally: Tally }>();
  let onMessage: (message: FromGenerator) => void = () => undefined;
  const workerFile = options.workerFile ?? new URL('./worker.js', import.meta.url);
  let progress: NodeJS.Timeout | undefined;
  // A generator thread that dies fails the run rather than leaving it waiting for its report.
  let fail: (err: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  const agent = createAgent(4, options.timeoutMs);
  let deployer: ReturnType<typeof startDeploys> | undefined;
  try {
    for (let index = 0; index < threads; index++) {
      const setup: GeneratorSetup = {
        index,
        threads,
        sites,
        targets: options.targets,
        mode: options.mode,
        ratePerThread: options.rate / threads,
        // Open loop: enough connections that a slow answer does not hold the schedule back.
        connections:
          options.mode === 'closed'
            ? perThread(options.connections, index)
            : Math.max(8, options.connections > 0 ? perThread(options.connections, index) : 256),
        mix: options.mix,
        zipfExponent: options.zipfExponent,
        seed: options.seed,
        checkShare: options.checkShare,
        timeoutMs: options.timeoutMs,
        startedAt,
      };
      const worker = new Worker(workerFile, { workerData: setup });
      worker.on('message', (message: FromGenerator) => onMessage(message));
      worker.on('error', (err) => fail(err));
      worker.on('exit', (code) => {
        if (code !== 0) fail(new Error(`generator thread ${index} stopped (exit ${code})`));
      });
      workers.push(worker);
    }
    await Promise.race([
      failed,
      new Promise<void>((resolve) => {
        let ready = 0;
        onMessage = (message) => {
          if (message.type === 'ready' && ++ready === threads) resolve();
        };
      }),
    ]);
    const send = (message: ToGenerator): void => workers.forEach((worker) => worker.postMessage(message));
    deployer = options.deploys
      ? startDeploys({
          corpus: options.corpus,
          api: options.deploys.api,
          token: options.deploys.token,
          agent,
          perMinute: options.deploys.perMinute,
          hotSites: options.deploys.hotSites,
          observeOrigin: (site) => options.targets[0]?.origin ?? sites[site]!.origin,
          accept: (site, path, sha256) => send({ type: 'accept', site, path, sha256 }),
          startedAt,
        })
      : undefined;

    const targetTallies = options.targets.map((target) => ({ label: target.label, tally: emptyTally(), activeMs: 0 }));
    const threadResults: ThreadResult[] = workers.map((_, thread) => ({ thread, requests: 0, event_loop_utilization: 0, send_lag_p99_ms: 0 }));
    const rounds: RoundResult[] = [];
    const plan = planRounds(options.durationMs, options.targets.length, options.roundMs);
    const durationS = plan.reduce((sum, round) => sum + round.ms, 0) / 1000;
    // The progress line shows the last full second (the threads report each second as it ends).
    progress = setInterval(() => {
      const second = Math.floor((Date.now() - startedAt) / 1000) - 1;
      const entries = [...timeline.values()].filter((entry) => entry.second === second);
      if (entries.length === 0 || !options.progress) return;
      const tally = entries.reduce((sum, entry) => mergeTally(sum, entry.tally), emptyTally());
      options.progress({
        elapsedS: second + 1,
        durationS,
        target: entries.map((entry) => entry.target).join(', '),
        requestsPerSecond: tally.requests,
        p99Ms: percentilesMs(tally.latency).p99,
        errors: errorCount(tally),
      });
    }, 1000);
    for (const round of plan) {
      const label = options.targets[round.target]!.label;
      const roundStarted = Date.now();
      const done = new Promise<Array<Extract<FromGenerator, { type: 'round-done' }>>>((resolve) => {
        const reports: Array<Extract<FromGenerator, { type: 'round-done' }>> = [];
        onMessage = (message) => {
          if (message.type === 'slices') {
            for (const slice of message.slices) {
              const target = options.targets[slice.target]!.label;
              const key = `${slice.second}|${target}`;
              const entry = timeline.get(key) ?? { second: slice.second, target, tally: emptyTally() };
              mergeTally(entry.tally, slice.tally);
              timeline.set(key, entry);
            }
          } else if (message.type === 'round-done') {
            reports.push(message);
            if (reports.length === threads) resolve(reports);
          }
        };
      });
      send({ type: 'round', round: round.index, target: round.target, endsAt: roundStarted + round.ms });
      const reports = await Promise.race([failed, done]);
      const roundTally = emptyTally();
      for (const r of reports) {
        mergeTally(roundTally, r.tally);
        const thread = threadResults[r.index]!;
        thread.requests += r.tally.requests;
        // Averaged over the rounds, weighted equally.
        thread.event_loop_utilization += r.utilization / plan.length;
        thread.send_lag_p99_ms = Math.max(thread.send_lag_p99_ms, r.sendLagP99Ms);
      }
      const ended = Date.now();
      const target = targetTallies[round.target]!;
      mergeTally(target.tally, roundTally);
      target.activeMs += round.ms;
      rounds.push({
        index: round.index,
        target: label,
        started_s: (roundStarted - startedAt) / 1000,
        ended_s: (ended - startedAt) / 1000,
        requests: roundTally.requests,
        requests_per_second: roundTally.requests / (round.ms / 1000),
      });
    }
    clearInterval(progress);
    const deploys = deployer ? await deployer.stop() : [];
    deployer = undefined;
    send({ type: 'stop' });
    const cpu = process.cpuUsage(cpuBefore);
    const overall = emptyTally();
    for (const target of targetTallies) mergeTally(overall, target.tally);
    return {
      startedAt,
      elapsedMs: Date.now() - startedAt,
      targets: targetTallies,
      overall,
      rounds,
      threads: threadResults,
      timeline: [...timeline.values()].sort((a, b) => a.second - b.second || a.target.localeCompare(b.target)),
      deploys,
      cpuMs: (cpu.user + cpu.system) / 1000,
      cores,
    };
  } finally {
    clearInterval(progress);
    fail = () => undefined;
    await deployer?.stop().catch(() => undefined);
    await Promise.all(workers.map((worker) => worker.terminate()));
    await agent.destroy().catch(() => undefined);
  }
}
