import type { Random } from './random.js';

/**
 * Site popularity on a Zipf curve: rank k (0-based) is chosen with probability proportional to
 * 1/(k+1)^s. A few sites take most visits and a long tail takes the rest, as on a real host.
 * The cumulative weights are computed once; each pick is a binary search.
 */
export interface Zipf {
  readonly size: number;
  pick(random: Random): number;
  /** The probability of rank k. */
  probability(k: number): number;
}

export function createZipf(size: number, exponent = 1): Zipf {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('a Zipf curve needs at least one rank');
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let k = 0; k < size; k++) {
    total += 1 / Math.pow(k + 1, exponent);
    cumulative[k] = total;
  }
  return {
    size,
    pick(random) {
      const target = random() * total;
      let low = 0;
      let high = size - 1;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (cumulative[middle]! < target) low = middle + 1;
        else high = middle;
      }
      return low;
    },
    probability: (k) => 1 / Math.pow(k + 1, exponent) / total,
  };
}
