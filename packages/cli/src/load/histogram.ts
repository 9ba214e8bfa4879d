/**
 * Latencies in a histogram of logarithmic buckets (1 % wide, from 1 µs to over an hour): constant
 * memory however many requests a run makes, percentiles within 1 %, and plain arrays that cross
 * from a worker thread and add up (HdrHistogram's idea, kept small). Values are microseconds.
 */
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(4e9) / LOG_GROWTH) + 1;

export interface Histogram {
  count: number;
  maxUs: number;
  sumUs: number;
  /** Sparse: bucket index → count. */
  buckets: Record<number, number>;
}

export const emptyHistogram = (): Histogram => ({ count: 0, maxUs: 0, sumUs: 0, buckets: {} });

const bucketOf = (us: number): number => (us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(us) / LOG_GROWTH)));
// The upper edge of a bucket: a percentile is never reported lower than the values it covers.
const edgeOf = (bucket: number): number => Math.pow(GROWTH, bucket);

export function record(histogram: Histogram, us: number): void {
  const value = Math.max(0, us);
  const bucket = bucketOf(value);
  histogram.buckets[bucket] = (histogram.buckets[bucket] ?? 0) + 1;
  histogram.count++;
  histogram.sumUs += value;
  if (value > histogram.maxUs) histogram.maxUs = value;
}

export function merge(into: Histogram, from: Histogram): Histogram {
  for (const [bucket, count] of Object.entries(from.buckets)) into.buckets[Number(bucket)] = (into.buckets[Number(bucket)] ?? 0) + count;
  into.count += from.count;
  into.sumUs += from.sumUs;
  into.maxUs = Math.max(into.maxUs, from.maxUs);
  return into;
}

/** The value at quantile q (0–1) in microseconds: 0 for an empty histogram, never above the max. */
export function quantile(histogram: Histogram, q: number): number {
  if (histogram.count === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * histogram.count));
  let seen = 0;
  const buckets = Object.keys(histogram.buckets)
    .map(Number)
    .sort((a, b) => a - b);
  for (const bucket of buckets) {
    seen += histogram.buckets[bucket]!;
    if (seen >= rank) return Math.min(edgeOf(bucket), histogram.maxUs);
  }
  return histogram.maxUs;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  'p99.9': number;
  max: number;
}

const ms = (us: number): number => Math.round(us) / 1000;

/** p50, p90, p99, p99.9 and max, in milliseconds (three decimals). */
export function percentilesMs(histogram: Histogram): Percentiles {
  return {
    p50: ms(quantile(histogram, 0.5)),
    p90: ms(quantile(histogram, 0.9)),
    p99: ms(quantile(histogram, 0.99)),
    'p99.9': ms(quantile(histogram, 0.999)),
    max: ms(histogram.maxUs),
  };
}
