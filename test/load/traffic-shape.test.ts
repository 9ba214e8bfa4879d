import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../packages/cli/src/load/client.js';
import { planSite } from '../../packages/cli/src/load/site-plan.js';
import { DEFAULT_MIX, pickKind, REQUEST_KINDS, type RequestKind, type TrafficMix } from '../../packages/cli/src/load/mix.js';
import { parseDuration } from '../../packages/cli/src/load/options.js';
import { seededRandom } from '../../packages/cli/src/load/random.js';
import { planRounds } from '../../packages/cli/src/load/rounds.js';
import { pageUrl, planRequest, type TrafficSite } from '../../packages/cli/src/load/traffic.js';
import { createZipf } from '../../packages/cli/src/load/zipf.js';

/**
 * The traffic shape of `plinth load run` (issue 34): site popularity on a Zipf curve and the mix
 * of pages, assets, media, large files and misses, each within a tolerance over many draws; and
 * the small rules around them. Seeded: the default seed is fixed and printed on failure.
 */
const SEED = Number(process.env.LOAD_TEST_SEED ?? 34);
const DRAWS = 200_000;

describe('Zipf popularity', () => {
  it.each([
    [1000, 1],
    [100, 1],
    [50, 1.2],
    [10, 0.8],
  ])('over %i sites with exponent %d, each top rank is drawn as often as the curve says', (sites, exponent) => {
    const zipf = createZipf(sites, exponent);
    const random = seededRandom(SEED);
    const counts = Array.from({ length: sites }, () => 0);
    for (let i = 0; i < DRAWS; i++) counts[zipf.pick(random)]!++;
    for (const rank of [0, 1, 2, 9]) {
      const expected = zipf.probability(rank) * DRAWS;
      // Four standard deviations of a binomial count, and never less than 0.5 % of the draws.
      const tolerance = Math.max(4 * Math.sqrt(expected), DRAWS * 0.005);
      expect(Math.abs(counts[rank]! - expected), `rank ${rank}, seed ${SEED}`).toBeLessThan(tolerance);
    }
    const total = Array.from({ length: sites }, (_, k) => zipf.probability(k)).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1, 9);
    // The curve: the first site takes about as much as sites 2–3 together at exponent 1.
    expect(counts[0]!).toBeGreaterThan(counts[1]!);
    expect(counts[1]!).toBeGreaterThan(counts[sites - 1]!);
  });

  it.each([[0], [-1], [1.5]])('refuses a curve of %d ranks', (size) => {
    expect(() => createZipf(size)).toThrow(RangeError);
  });
});

describe('the request mix', () => {
  const mixes: Array<[string, TrafficMix]> = [
    ['the default mix', DEFAULT_MIX],
    ['pages only', { page: 1, asset: 0, media: 0, large: 0, miss: 0, revalidate: 0 }],
    ['an even mix', { page: 1, asset: 1, media: 1, large: 1, miss: 1, revalidate: 0.5 }],
    ['many misses', { page: 0.5, asset: 0, media: 0, large: 0, miss: 0.5, revalidate: 0 }],
  ];

  it.each(mixes)('%s: each kind is drawn in its share within 0.5 points', (_name, mix) => {
    const random = seededRandom(SEED);
    const counts = Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>;
    for (let i = 0; i < DRAWS; i++) counts[pickKind(random, mix)]++;
    const total = REQUEST_KINDS.reduce((sum, kind) => sum + mix[kind], 0);
    for (const kind of REQUEST_KINDS) expect(Math.abs(counts[kind] / DRAWS - mix[kind] / total), `${kind}, seed ${SEED}`).toBeLessThan(0.005);
  });

  // Sites that have every kind of file, so no draw falls back to another kind.
  const file = (url: string) => ({ url, path: url.slice(1), type: 'text/html', sha256: ['x'] });
  const sites: TrafficSite[] = Array.from({ length: 50 }, (_, i) => ({
    name: `s${i}`,
    host: `s${i}.sites.localhost`,
    origin: 'http://127.0.0.1:1',
    files: { page: [file('/'), file('/about')], asset: [file('/a.css')], media: [file('/p.jpg')], large: [file('/v.mp4')] },
  }));

  it('plans requests whose kinds, revalidations and sites follow the mix and the curve', () => {
    const random = seededRandom(SEED);
    const zipf = createZipf(sites.length);
    const kinds = Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>;
    let revalidations = 0;
    let firstSite = 0;
    const strays: string[] = [];
    for (let i = 0; i < DRAWS; i++) {
      const request = planRequest(random, zipf, sites, DEFAULT_MIX);
      kinds[request.kind]++;
      if (request.revalidate) revalidations++;
      if (request.site === 0) firstSite++;
      const fits = request.kind === 'miss' ? request.file === undefined : sites[request.site]!.files[request.kind].some((f) => f.url === request.url);
      if (!fits) strays.push(`${request.kind} ${request.url}`);
    }
    expect(strays).toEqual([]);
    const total = REQUEST_KINDS.reduce((sum, kind) => sum + DEFAULT_MIX[kind], 0);
    for (const kind of REQUEST_KINDS) expect(Math.abs(kinds[kind] / DRAWS - DEFAULT_MIX[kind] / total), kind).toBeLessThan(0.005);
    const revalidatable = (kinds.page + kinds.asset) / DRAWS;
    expect(Math.abs(revalidations / DRAWS - revalidatable * DEFAULT_MIX.revalidate)).toBeLessThan(0.005);
    expect(Math.abs(firstSite / DRAWS - zipf.probability(0))).toBeLessThan(0.005);
  });

  it('asks a site without large files or media for the next best kind it has', () => {
    const bare: TrafficSite = { ...sites[0]!, files: { page: [file('/')], asset: [], media: [], large: [] } };
    const random = seededRandom(SEED);
    for (let i = 0; i < 1000; i++) {
      const request = planRequest(random, createZipf(1), [bare], { ...DEFAULT_MIX, large: 1, media: 1 });
      expect(['page', 'miss']).toContain(request.kind);
    }
  });
});

describe('the corpus shape', () => {
  it.each([[1], [2], [3], [4], [5]])('site %i has an index page, assets, images, and sizes in the issue ranges', (n) => {
    const files = planSite(SEED * 100 + n);
    expect(files[0]).toEqual(expect.objectContaining({ path: 'index.html', kind: 'page' }));
    const ranges: Partial<Record<string, [number, number]>> = { page: [2, 40], asset: [5, 300], media: [20, 2048], large: [5 * 1024, 50 * 1024] };
    for (const file of files) {
      const range = ranges[file.kind];
      if (!range) continue;
      expect(file.size, file.path).toBeGreaterThanOrEqual(range[0] * 1024);
      expect(file.size, file.path).toBeLessThanOrEqual(range[1] * 1024);
    }
    expect(files.some((f) => f.kind === 'asset')).toBe(true);
    expect(files.filter((f) => f.kind === 'media').length).toBeGreaterThanOrEqual(2);
  });

  it('puts a 404.html on about 30 % of sites, _redirects on about 20 % and large files on a few', () => {
    const plans = Array.from({ length: 2000 }, (_, i) => planSite(i + 1));
    const share = (test: (files: ReturnType<typeof planSite>) => boolean) => plans.filter(test).length / plans.length;
    expect(share((files) => files.some((f) => f.path === '404.html'))).toBeCloseTo(0.3, 1);
    expect(share((files) => files.some((f) => f.path === '_redirects'))).toBeCloseTo(0.2, 1);
    expect(share((files) => files.some((f) => f.kind === 'large'))).toBeLessThan(0.06);
  });
});

describe('small rules', () => {
  it.each([
    ['index.html', '/'],
    ['about.html', '/about'],
    ['blog/post-3.html', '/blog/post-3'],
    ['docs/index.html', '/docs/'],
  ])('asks for page %s as %s', (path, url) => {
    expect(pageUrl(path)).toBe(url);
  });

  it.each([
    [10_000, 1, undefined, [0]],
    [60_000, 1, undefined, [0, 0, 0, 0, 0, 0]],
    [4_000, 2, undefined, [0, 1, 0, 1]],
    [6_000, 3, 1_000, [0, 1, 2, 0, 1, 2]],
    [3_000, 2, 500, [0, 1, 0, 1, 0, 1]],
  ])('a run of %i ms over %i targets (rounds of %s ms) visits them in turn: %j', (duration, targets, round, order) => {
    const rounds = planRounds(duration, targets, round);
    expect(rounds.map((r) => r.target)).toEqual(order);
    expect(rounds.map((r) => r.index)).toEqual(order.map((_, i) => i));
  });

  it.each([
    ['60s', 60_000],
    ['2m', 120_000],
    ['500ms', 500],
    ['1.5', 1_500],
    ['1h', 3_600_000],
  ])('reads the duration %s as %i ms', (text, ms) => {
    expect(parseDuration(text, '--duration')).toBe(ms);
  });

  it.each([['0s'], ['-1s'], ['ten'], ['5 days'], ['']])('refuses the duration %j', (text) => {
    expect(() => parseDuration(text, '--duration')).toThrow(/--duration/);
  });

  it.each([
    ['127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['lb.example.net:80', 'http://lb.example.net:80'],
    ['[::1]:8081', 'http://[::1]:8081'],
  ])('reads the address %s', (text, origin) => {
    expect(parseAddress(text).origin).toBe(origin);
  });

  it.each([['127.0.0.1'], ['127.0.0.1:0'], ['127.0.0.1:70000'], ['http://x:80'], ['::1:80'], ['a b:80']])('refuses the address %j', (text) => {
    expect(() => parseAddress(text)).toThrow(/HOST:PORT/);
  });
});
