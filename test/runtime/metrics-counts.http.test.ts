import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MetricFamily } from '../../src/runtime/metric-families.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';

/**
 * /metrics counts every answer exactly, whichever writer ends it: the prepared hot path (which
 * counts its own answers without the response meter's wrappers), a large body sent with
 * backpressure, and the general writers (HEAD, 405, unknown hosts). Metrics on, access log off:
 * the configuration where answers given within their handler are not timed.
 */

const server = useTestServer();
const HOST = 'counted.sites.localhost';
const index = '<!doctype html><p>counted</p>';
const notFound = '<!doctype html><p>no such page here</p>';
const big = randomBytes(200 * 1024 + 3);

beforeAll(async () => {
  await publishSite(server.store, 'counted', { 'index.html': index, '404.html': notFound, 'big.bin': big });
});

const get = (path: string, headers: Record<string, string> = {}, method = 'GET', host = HOST) => request({ port: server.port, host, path, headers, method });

function value(families: MetricFamily[], name: string, labels: Record<string, string>): number {
  const family = families.find((f) => f.name === name);
  const found = family?.values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
  return found?.value ?? 0;
}

describe('request metrics', () => {
  it('count status and body bytes of every answer exactly, prepared ones included', async () => {
    const before = server.metrics();
    const pages = [];
    for (let i = 0; i < 5; i++) pages.push(await get('/'));
    const etag = pages[0]!.headers.etag as string;
    const revalidated = [await get('/', { 'if-none-match': etag }), await get('/', { 'if-none-match': `"other", ${etag}` })];
    const missing = await get('/no/such/page');
    const large = await get('/big.bin');
    const head = await get('/', {}, 'HEAD');
    const post = await get('/', {}, 'POST');
    const unknown = await get('/', {}, 'GET', 'nowhere.example');

    expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
    expect(revalidated.map((r) => r.status)).toEqual([304, 304]);
    expect([missing.status, missing.text]).toEqual([404, notFound]);
    expect(large.body.equals(big)).toBe(true);
    expect([head.status, post.status, unknown.status]).toEqual([200, 405, 404]);

    const after = server.metrics();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    const requests = (hostKind: string, status: string) => delta('plinth_http_requests_total', { host_kind: hostKind, status });
    expect(requests('site', '2xx')).toBe(5 + 1 + 1);
    expect(requests('site', '3xx')).toBe(2);
    expect(requests('site', '4xx')).toBe(2);
    expect(requests('site', 'aborted')).toBe(0);
    expect(requests('other', '4xx')).toBe(1);
    expect(delta('plinth_http_response_bytes_total', { host_kind: 'site' })).toBe(
      5 * Buffer.byteLength(index) + Buffer.byteLength(notFound) + big.byteLength + post.body.byteLength,
    );
    expect(delta('plinth_http_response_bytes_total', { host_kind: 'other' })).toBe(unknown.body.byteLength);
    // Every answer has a duration sample; those given within their handler count as the first bucket.
    expect(delta('plinth_http_request_duration_seconds', { host_kind: 'site', le: '+Inf' })).toBe(11);
  });
});
