/**
 * The order targets are visited in. Every target gets the same number of rounds, interleaved
 * (A, B, A, B …), never one block then the other: a machine that warms up, a neighbour that gets
 * busy or a cache that fills then weighs on every target alike.
 */
export interface PlannedRound {
  index: number;
  target: number;
  ms: number;
}

export function planRounds(durationMs: number, targets: number, roundMs?: number): PlannedRound[] {
  if (targets < 1) throw new RangeError('at least one target');
  // By default each target gets at least two rounds, of at most 10 s.
  const length = Math.max(250, roundMs ?? Math.min(10_000, durationMs / (targets > 1 ? 2 * targets : 1)));
  const perTarget = Math.max(1, Math.round(durationMs / (length * targets)));
  const rounds: PlannedRound[] = [];
  for (let cycle = 0; cycle < perTarget; cycle++) for (let target = 0; target < targets; target++) rounds.push({ index: rounds.length, target, ms: length });
  return rounds;
}
