/**
 * The candidate nearest to `name` by edit distance (insertions, deletions, substitutions and
 * swaps of two neighbours each count one), ties going to the earlier candidate; undefined only
 * when there are no candidates. Used to name the setting a mistyped variable was meant to be.
 */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance: Levenshtein plus transpositions of adjacent characters. */
export function editDistance(a: string, b: string): number {
  // Three rows suffice: a transposition looks two rows back.
  let before = Array.from({ length: b.length + 1 }, () => 0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = Array.from({ length: b.length + 1 }, () => 0);
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, before[j - 2]! + 1);
      current[j] = distance;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
