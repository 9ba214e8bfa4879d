import type { TrafficMix } from './mix.js';
import type { Tally } from './tally.js';
import type { TrafficSite } from './traffic.js';

/** What crosses between the run's main thread and its generator threads: plain data only. */
export interface GeneratorSetup {
  index: number;
  threads: number;
  sites: TrafficSite[];
  /** Where requests go: an origin per target, or undefined for each site's own origin. */
  targets: Array<{ label: string; origin?: string }>;
  mode: 'open' | 'closed';
  /** Open loop: this thread's requests per second. */
  ratePerThread: number;
  /** Closed loop: this thread's connections, each one request at a time. Open loop: its connection cap. */
  connections: number;
  mix: TrafficMix;
  zipfExponent: number;
  seed: number;
  /** Share of answers whose bytes are checked (0–1). */
  checkShare: number;
  timeoutMs: number;
  /** The run's start (epoch ms): the timeline's seconds count from it. */
  startedAt: number;
}

export type ToGenerator =
  { type: 'round'; round: number; target: number; endsAt: number } | { type: 'accept'; site: number; path: string; sha256: string } | { type: 'stop' };

/** One second of one target, from one thread. */
export interface Slice {
  second: number;
  target: number;
  tally: Tally;
}

export type FromGenerator =
  | { type: 'ready'; index: number }
  | { type: 'slices'; index: number; slices: Slice[] }
  | {
      type: 'round-done';
      index: number;
      round: number;
      tally: Tally;
      /** How busy this thread's event loop was during the round (0–1). */
      utilization: number;
      /** Open loop: how late requests left after their intended time, p99 in ms. */
      sendLagP99Ms: number;
    };
