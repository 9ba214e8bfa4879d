// Interleaved rounds and their statistics, shared by every bench that compares servers or
// configurations.
//
// Why: on a shared machine speed drifts over minutes, so two things measured one after the other
// differ by whatever the machine did in between (the same 60 KB case once read 0.72×, 0.93× and
// 1.19× nginx in three runs that measured each server's rounds back to back). So every compared
// arm is set up once, side by side, and measured once per round, in an order rotated each round
// (A,B,C then B,C,A …: none always goes first, or always right after the same neighbour). A figure
// is the median of its rounds, with their range; a ratio is taken within each round, between
// measurements seconds apart, and then its median is reported: a ratio of medians would pair one
// arm's good minute with another's bad one.

/** `list` rotated left by `round` places: A,B,C → B,C,A → C,A,B → A,B,C … */
export function rotate(list, round) {
  const n = list.length;
  return list.map((_, i) => list[(i + round) % n]);
}

/**
 * Measures every arm once per round, in `rotate(arms, round)` order. With `warmup`, one pass
 * (round order 0, results discarded) comes first. Returns, per arm (same order as `arms`), its
 * results by round: index i of every list is round i, so lists pair up.
 */
export async function runRounds(arms, rounds, measure, { warmup } = {}) {
  if (warmup) for (const arm of arms) await warmup(arm);
  const results = arms.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const arm of rotate(arms, round)) results[arms.indexOf(arm)][round] = await measure(arm, round);
  }
  return results;
}

/** The median of the finite numbers in `values` (mean of the middle two for an even count). */
export function median(values) {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** Median, min and max (and how many) of the finite numbers in `values`; NaN where there are none. */
export function summarize(values) {
  const xs = values.filter(Number.isFinite);
  return { median: median(xs), min: xs.length ? Math.min(...xs) : NaN, max: xs.length ? Math.max(...xs) : NaN, n: xs.length };
}

/**
 * Round by round `a[i] ÷ b[i]` (rounds where either side is missing are left out), summarized:
 * the median of the per-round ratios and their range, never a ratio of medians.
 */
export function pairedRatio(a, b) {
  return summarize(a.map((x, i) => (Number.isFinite(x) && b[i] > 0 ? x / b[i] : NaN)));
}

/** `f(median) (f(min)–f(max))`, or `f(median)` when min and max print alike; `–` when empty. */
export function formatSummary(s, f) {
  if (!s || !Number.isFinite(s.median)) return '–';
  const [lo, hi] = [f(s.min), f(s.max)];
  return lo === hi ? f(s.median) : `${f(s.median)} (${lo}–${hi})`;
}
