import { isbot } from 'isbot';
import { describe, expect, it } from 'vitest';
import { addDays, analyticsRange, analyticsReachDays, countedPath, dayStart, referrerHost, utcDay } from '../../src/rules/index.js';
import { isCrawler, summarizeBatch, visitorHash } from '../../src/serve/analytics-flush.js';
import { createVisitCounter } from '../../src/serve/visits.js';
import { headerNameText, type RecognizedString } from '../../src/http/index.js';

/** The pure rules of site analytics (docs/analytics.md): days, ranges, referrers, crawlers, the visitor hash, a batch. */

const TODAY = '2026-11-29';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/**
 * A request as serving hands it to the counter: header lines in order, a name given more than
 * once for repeated lines. `getHeader` gives the first line as uWS does, by a name as text or as
 * bytes (serving names headers as bytes, http/header-names.ts).
 */
function fakeRequest(lines: Record<string, string | string[]> = {}) {
  const all = Object.entries(lines).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one) => [name, one] as const));
  return {
    getHeader: (name: RecognizedString) => all.find(([each]) => each === headerNameText(name))?.[1] ?? '',
    forEach: (each: (name: string, value: string) => void) => all.forEach(([name, value]) => each(name, value)),
  };
}

describe('analyticsRange', () => {
  it.each([
    [{}, 365, { ok: true, from: '2026-10-31', to: TODAY }],
    [{ from: TODAY, to: TODAY }, 365, { ok: true, from: TODAY, to: TODAY }],
    [{ to: '2026-11-10' }, 365, { ok: true, from: '2026-10-12', to: '2026-11-10' }],
    [{ from: '2026-11-01', to: '2030-01-01' }, 365, { ok: true, from: '2026-11-01', to: TODAY }],
    // Past the reach: starts where the kept days start.
    [{}, 7, { ok: true, from: '2026-11-23', to: TODAY }],
    [{}, 3, { ok: true, from: '2026-11-27', to: TODAY }],
    [{ from: '2026-01-01', to: '2026-01-05' }, 7, { ok: true, from: '2026-01-05', to: '2026-01-05' }],
    [{ from: '2025-01-01', to: '2026-11-29' }, 731, { ok: true, from: '2025-01-01', to: TODAY }],
  ])('%j with %i days kept → %j', (asked, reach, expected) => {
    expect(analyticsRange(asked, TODAY, reach)).toEqual(expected);
  });

  it.each([
    [{ from: '2026-13-01' }, '"from" must be a date'],
    [{ from: '2026-02-29' }, '"from" must be a date'],
    [{ to: '29-11-2026' }, '"to" must be a date'],
    [{ from: '2026-11-01T00:00:00Z' }, '"from" must be a date'],
    [{ from: '' }, '"from" must be a date'],
    [{ from: '2026-11-20', to: '2026-11-19' }, 'is after "to"'],
    [{ from: '2026-12-01' }, 'after today'],
    [{ from: '2020-01-01' }, 'at most 731 days'],
  ])('refuses %j', (asked, words) => {
    const range = analyticsRange(asked, TODAY, 731);
    expect(range.ok).toBe(false);
    expect(!range.ok && range.problem).toContain(words);
  });
});

describe('days', () => {
  it('are UTC dates, moved by whole days across months and years', () => {
    expect(utcDay(Date.UTC(2026, 10, 29, 23, 59, 59))).toBe(TODAY);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(dayStart('2026-02-30')).toBeUndefined();
  });

  it.each([
    ['anonymous', 3],
    ['free', 7],
    ['prompter', 90],
    ['builder', 365],
    ['company', 730],
  ] as const)('a %s site keeps %i days', (plan, days) => {
    expect(analyticsReachDays(plan)).toBe(days);
  });
});

describe('referrerHost', () => {
  it.each([
    ['https://news.example.net/a?b#c', 'news.example.net'],
    ['http://WWW.Example.ORG:8080/', 'example.org'],
    ['https://user:pass@example.com/', 'example.com'],
    ['https://example.com.', 'example.com'],
    ['http://[2001:DB8::1]/', '[2001:db8::1]'],
    ['https://xn--bcher-kva.example/', 'xn--bcher-kva.example'],
    ['android-app://com.google.android.gm/', undefined],
    ['javascript:alert(1)', undefined],
    ['//example.com/', undefined],
    ['https://', undefined],
    ['https://<script>/', undefined],
    ['https://exa mple.com/', undefined],
    ['', undefined],
  ])('%s → %s', (referer, host) => {
    expect(referrerHost(referer)).toBe(host);
  });
});

describe('isCrawler', () => {
  it.each([
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', true],
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', true],
    ['curl/8.5.0', true],
    ['', true],
    ['   ', true],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', false],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', false],
  ])('%s → %s', (userAgent, crawler) => {
    expect(isCrawler(userAgent)).toBe(crawler);
    // Asked again, the kept verdict is the same.
    expect(isCrawler(userAgent)).toBe(crawler);
  });

  it('gives the same verdicts past the bound of kept ones, and for user agents too long to keep', () => {
    for (let i = 0; i < 10_050; i++) expect(isCrawler(`Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.${i}`)).toBe(false);
    expect(isCrawler('Googlebot/2.1')).toBe(true);
    const long = `Mozilla/5.0 (X11; Linux x86_64) ${'x'.repeat(600)} Firefox/128.0`;
    expect(isCrawler(long)).toBe(isbot(long));
    expect(isCrawler(long)).toBe(isbot(long));
  });
});

describe('visitorHash', () => {
  it('tells visitors apart by network and user agent, and changes with the day’s salt', () => {
    const a = visitorHash('salt-1', '203.0.113.0/24', 'Firefox');
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(visitorHash('salt-1', '203.0.113.0/24', 'Firefox')).toBe(a);
    expect(visitorHash('salt-1', '198.51.100.0/24', 'Firefox')).not.toBe(a);
    expect(visitorHash('salt-1', '203.0.113.0/24', 'Chrome')).not.toBe(a);
    expect(visitorHash('salt-2', '203.0.113.0/24', 'Firefox')).not.toBe(a);
  });
});

describe('a batch', () => {
  it('splits page views into pages, referrers, visitors and crawlers, and bounds its entries', () => {
    let full = 0;
    const counter = createVisitCounter({ now: () => 0, readForwarded: false, maxEntries: 3, onFull: () => full++ });
    const req = fakeRequest;
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    counter.page('s1', 'one', '203.0.113.5', '/', firefox, req({ referer: 'https://news.example.net/x' }), 100);
    counter.page('s1', 'one', '203.0.113.5', '/', firefox, req({ referer: 'https://news.example.net/x' }), 0);
    counter.page('s1', 'one', '203.0.113.9', '/a', firefox, req({ referer: 'http://one.sites.localhost/' }), 50);
    counter.page('s1', 'one', '66.249.66.1', '/', 'Googlebot/2.1', req({}), 100);
    // No user agent: a crawler, counted without its address (which is not even read).
    counter.page('s1', 'one', '', '/', '', req({}), 100);
    // Past the bound: counted, without its details.
    counter.page('s1', 'one', '192.0.2.1', '/b', firefox, req({}), 10);
    counter.other('s1', 'one', true, 0);
    counter.other('s1', 'one', false, 1000);
    expect(full).toBe(1);
    const batch = counter.take();
    expect(counter.take().sites.size).toBe(0);
    const [visits] = summarizeBatch(batch, TODAY, 'salt', { kind: 'none' }, (_id, name) => new Set([`${name}.sites.localhost`]));
    expect(visits).toEqual({
      siteId: 's1',
      day: TODAY,
      pageViews: 4,
      crawlerViews: 2,
      notFound: 1,
      bytes: 1360,
      visitors: [visitorHash('salt', '203.0.113.0/24', firefox)],
      pages: [
        ['/', 2],
        ['/a', 1],
      ],
      referrers: [['news.example.net', 2]],
    });
  });

  // The site's own addresses: its address under the site domain, and its verified custom
  // domains (here example.org and www.blog.example.net), each with its www variant.
  it.each([
    ['its own address', 'http://one.sites.localhost/', []],
    ['its own address with www.', 'https://www.one.sites.localhost/a', []],
    ['a custom domain', 'https://example.org/post', []],
    ['the www variant of a custom domain', 'https://www.example.org/', []],
    ['a www custom domain', 'https://www.blog.example.net/', []],
    ['a custom domain with a port and another case', 'http://Example.ORG:8080/x', []],
    ['the name without www. of a www custom domain', 'https://blog.example.net/', [['blog.example.net', 1]]],
    ['another name under a custom domain', 'https://shop.example.org/', [['shop.example.org', 1]]],
    ['a name that merely starts with a custom domain', 'https://example.org.evil.example/', [['example.org.evil.example', 1]]],
    ['another site', 'https://two.sites.localhost/', [['two.sites.localhost', 1]]],
    ['elsewhere', 'https://www.news.example.net/', [['news.example.net', 1]]],
  ])('leaves out a referrer from the site itself: %s', (_what, referer, referrers) => {
    const counter = createVisitCounter({ now: () => 0, readForwarded: false, maxEntries: 100 });
    counter.page('s1', 'one', '203.0.113.5', '/', FIREFOX, fakeRequest({ referer }), 1);
    const own = (id: string, name: string) => new Set(id === 's1' ? [`${name}.sites.localhost`, 'example.org', 'www.blog.example.net'] : []);
    const [visits] = summarizeBatch(counter.take(), TODAY, 'salt', { kind: 'none' }, own);
    expect(visits!.pageViews).toBe(1);
    expect(visits!.referrers).toEqual(referrers);
  });

  it('counts the same request to another site, or after a batch was taken, where it belongs', () => {
    const counter = createVisitCounter({ now: () => 0, readForwarded: true, maxEntries: 100 });
    const req = fakeRequest({ 'x-forwarded-for': '203.0.113.1' });
    counter.page('s1', 'one', '10.0.0.1', '/', 'Firefox', req, 1);
    counter.page('s2', 'two', '10.0.0.1', '/', 'Firefox', req, 2);
    counter.page('s2', 'two', '10.0.0.1', '/', 'Firefox', req, 3);
    const first = counter.take();
    counter.page('s2', 'two', '10.0.0.1', '/', 'Firefox', req, 4);
    const second = counter.take();
    const views = (batch: typeof first, site: string) => [...batch.sites.get(site)!.views.values()];
    expect(views(first, 's1')).toEqual([1]);
    expect(views(first, 's2')).toEqual([2]);
    expect(first.sites.get('s2')!.bytes).toBe(5);
    expect([...second.sites.keys()]).toEqual(['s2']);
    expect(views(second, 's2')).toEqual([1]);
    expect(first.entries + second.entries).toBe(3);
  });

  it('counts crawlers, files and 404s of sites served in turn into each site, and a taken batch starts afresh', () => {
    const counter = createVisitCounter({ now: () => 0, readForwarded: false, maxEntries: 100 });
    const req = fakeRequest();
    counter.page('s1', 'one', '', '/', '', req, 10);
    counter.other('s2', 'two', true, 20);
    counter.page('s1', 'one', '', '/', '', req, 30);
    counter.other('s2', 'two', false, 40);
    counter.other('s1', 'one', false, 50);
    const first = counter.take();
    counter.other('s1', 'one', true, 60);
    const second = counter.take();
    const of = (batch: typeof first, site: string) => {
      const tally = batch.sites.get(site)!;
      return { crawlerViews: tally.crawlerViews, notFound: tally.notFound, bytes: tally.bytes };
    };
    expect(of(first, 's1')).toEqual({ crawlerViews: 2, notFound: 0, bytes: 90 });
    expect(of(first, 's2')).toEqual({ crawlerViews: 0, notFound: 1, bytes: 60 });
    expect([...second.sites.keys()]).toEqual(['s1']);
    expect(of(second, 's1')).toEqual({ crawlerViews: 0, notFound: 1, bytes: 60 });
  });

  it('takes the client from X-Forwarded-For behind trusted hops, where serving left the address unread', () => {
    const counter = createVisitCounter({ now: () => 0, readForwarded: true, maxEntries: 100 });
    const req = (forwarded: string | string[]) => fakeRequest({ 'x-forwarded-for': forwarded });
    counter.page('s1', 'one', '', '/', FIREFOX, req('198.51.100.1, 203.0.113.9'), 1);
    counter.page('s1', 'one', '', '/', FIREFOX, req('203.0.113.10'), 1);
    // A proxy that adds a line of its own (HAProxy): the client's lines come first, whatever they say.
    counter.page('s1', 'one', '', '/', FIREFOX, req(['192.0.2.1', '203.0.113.11']), 1);
    counter.page('s1', 'one', '', '/', FIREFOX, req(['192.0.3.1', '198.51.100.7, 10.0.0.1', '203.0.113.12']), 1);
    const [visits] = summarizeBatch(counter.take(), TODAY, 'salt', { kind: 'hops', hops: 1 }, () => new Set(['one.sites.localhost']));
    expect(visits!.visitors).toEqual([visitorHash('salt', '203.0.113.0/24', FIREFOX)]);
  });

  it('cuts long paths', () => {
    expect(countedPath(`/${'a'.repeat(600)}`)).toHaveLength(512);
    expect(countedPath('/short')).toBe('/short');
  });
});
