/**
 * Metric families in the shape prom-client's registries give and take as JSON
 * (`getMetricsAsJSON`, `AggregatorRegistry.aggregate`): each HTTP thread counts in plain arrays
 * and writes its families only when asked, and the main thread sums them, label set by label
 * set, into one registry (ops-metrics.ts). Names follow docs/operating.md's metric table.
 */

export type Labels = Record<string, string>;

export interface MetricSample {
  value: number;
  labels: Labels;
  /** Set on histogram lines (`_bucket`, `_sum`, `_count`). */
  metricName?: string;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** How the main thread combines the threads' values: every family here is a sum. */
  aggregator: 'sum';
  values: MetricSample[];
}

export function counter(name: string, help: string, values: MetricSample[]): MetricFamily {
  return { name, help, type: 'counter', aggregator: 'sum', values };
}

export function gauge(name: string, help: string, values: MetricSample[]): MetricFamily {
  return { name, help, type: 'gauge', aggregator: 'sum', values };
}

/**
 * A histogram's bucket counts, kept per label set as counts per bucket (the last slot is +Inf)
 * plus a sum: recording is a bucket lookup and two additions, no allocation.
 */
export interface HistogramCounts {
  record(series: number, value: number): void;
  /** `count` values of `value` at once. */
  recordMany(series: number, value: number, count: number): void;
  family(name: string, help: string, labelsOf: (series: number) => Labels): MetricFamily;
}

export function histogramCounts(series: number, bounds: readonly number[]): HistogramCounts {
  const slots = bounds.length + 1;
  const counts = new Float64Array(series * slots);
  const sums = new Float64Array(series);
  const bucketOf = (value: number): number => {
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    return bucket;
  };
  return {
    record(at, value) {
      counts[at * slots + bucketOf(value)]!++;
      sums[at]! += value;
    },
    recordMany(at, value, count) {
      counts[at * slots + bucketOf(value)]! += count;
      sums[at]! += value * count;
    },
    family(name, help, labelsOf) {
      const values: MetricSample[] = [];
      for (let at = 0; at < series; at++) {
        let total = 0;
        for (let bucket = 0; bucket < slots; bucket++) total += counts[at * slots + bucket]!;
        // Series that never saw a value stay out of the scrape.
        if (total === 0) continue;
        const labels = labelsOf(at);
        let cumulative = 0;
        for (let bucket = 0; bucket < slots; bucket++) {
          cumulative += counts[at * slots + bucket]!;
          const le = bucket < bounds.length ? String(bounds[bucket]) : '+Inf';
          values.push({ value: cumulative, labels: { ...labels, le }, metricName: `${name}_bucket` });
        }
        values.push({ value: sums[at]!, labels, metricName: `${name}_sum` });
        values.push({ value: total, labels, metricName: `${name}_count` });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
  };
}
