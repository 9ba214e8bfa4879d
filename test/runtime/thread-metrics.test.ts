import { describe, expect, it } from 'vitest';
import type { MetricFamily } from '../../src/runtime/metric-families.js';
import { createThreadMetrics, HOST_KIND_INDEX, type ThreadMetricSources } from '../../src/runtime/thread-metrics.js';

const sources: ThreadMetricSources = {
  cache: {
    bodyBytes: 0,
    sites: 0,
    siteBytes: 0,
    badgedPagesBuiltElsewhere: 0,
    variantsMadeOnDemand: 0,
    lookups: { siteHits: 0, siteMisses: 0, pathHits: 0, pathMisses: 0 },
  },
  ingest: { queued: 0, inFlight: 0, capacity: 1 },
  store: { downloads: 0, downloadedBytes: 0, bucketErrors: 0, databaseErrors: 0, rateLimited: {} },
};

const requestFamilies = (families: MetricFamily[]) =>
  families.filter((family) => family.name.startsWith('plinth_http_')).map(({ name, values }) => ({ name, values }));

/**
 * Untimed answers (the prepared path's) are counted apart with two writes and folded in when the
 * families are read: /metrics must show exactly what counting each as an untimed request shows.
 */
describe('thread metrics', () => {
  it('show answers counted untimed exactly as requests that took no time, across several reads', () => {
    const answered = createThreadMetrics();
    const requested = createThreadMetrics();
    const site = HOST_KIND_INDEX.site;
    const domain = HOST_KIND_INDEX.domain;
    const both = (kind: number, status: number, bytes: number) => {
      answered.answered(kind, status, bytes);
      requested.request(kind, status, bytes, 0, false);
    };
    // Timed answers and aborts go the usual way in both.
    const timed = (kind: number, status: number, bytes: number, ms: number, aborted: boolean) => {
      answered.request(kind, status, bytes, ms, aborted);
      requested.request(kind, status, bytes, ms, aborted);
    };
    for (let i = 0; i < 5; i++) both(site, 200, 2048);
    both(site, 304, 0);
    both(domain, 404, 120);
    timed(site, 200, 50_000, 12, false);
    expect(requestFamilies(answered.families(sources))).toEqual(requestFamilies(requested.families(sources)));
    // Past a read: what was folded is not folded again, and new answers add to it.
    both(site, 410, 90);
    both(site, 200, 2048);
    timed(domain, 200, 0, 0, true);
    expect(requestFamilies(answered.families(sources))).toEqual(requestFamilies(requested.families(sources)));
    expect(requestFamilies(answered.families(sources))).toEqual(requestFamilies(requested.families(sources)));
    const total = answered
      .families(sources)
      .find((family) => family.name === 'plinth_http_requests_total')!
      .values.filter((sample) => sample.labels.host_kind === 'site')
      .reduce((sum, sample) => sum + sample.value, 0);
    expect(total).toBe(9);
  });
});
