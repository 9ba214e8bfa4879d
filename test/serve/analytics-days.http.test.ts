import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Days in analytics (docs/analytics.md): a visitor is counted once per UTC day, by a hash whose
 * salt is new each day, and the salts and hashes of past days are deleted once no batch can
 * need them, while the day's counts stay. The clock is the test's; batches are written when the
 * test says (a thread writes at midnight UTC of its own accord).
 */

const DAY = 86_400_000;
const DAY_1 = Date.UTC(2026, 5, 10, 12);
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

let clock = DAY_1;
let server: TestServer;
let owner: TestAccount;

beforeAll(async () => {
  server = await startTestServer({ PLINTH_ANALYTICS_FLUSH_MS: '30000' }, () => clock);
  owner = await accountWithToken(server.store, 'builder');
});

afterAll(async () => {
  await server?.close();
});

const visit = (name: string) => request({ port: server.port, host: `${name}.sites.localhost`, path: '/', headers: { 'user-agent': FIREFOX } });

/** What the analytics tables of the data directory hold besides the counts: the visitor hashes and the salts. */
function hashesAndSalts(): { visitors: Array<[string, string, string]>; salts: string[] } {
  const env = open(join(server.dataDir, 'meta'), { noSubdir: false, maxDbs: 48, readOnly: true });
  try {
    return {
      visitors: [...env.openDB<number, [string, string, string]>('analyticsVisitors', {}).getKeys({ snapshot: false })],
      salts: [...env.openDB<string, string>('analyticsSalts', {}).getKeys({ snapshot: false })],
    };
  } finally {
    void env.close();
  }
}

describe('analytics over days', () => {
  it('counts a returning visitor once a day under a new hash, and forgets the hashes of past days', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>Days</h1>' } });
    expect((await visit(site.name)).status).toBe(200);
    expect((await visit(site.name)).status).toBe(200);
    await server.flushAnalytics();

    clock = DAY_1 + DAY;
    // The batch begun before the clock moved belongs to day 1; the next one to day 2.
    await server.flushAnalytics();
    expect((await visit(site.name)).status).toBe(200);
    await server.flushAnalytics();

    const read = await api(server, { path: `/v1/sites/${site.name}/analytics?from=2026-06-10&to=2026-06-11`, token: owner.token });
    expect(read.status).toBe(200);
    expect(read.json.days.map((day: any) => [day.day, day.page_views, day.visitors])).toEqual([
      ['2026-06-10', 2, 1],
      ['2026-06-11', 1, 1],
    ]);
    expect(read.json.totals).toMatchObject({ page_views: 3, visitors: 2 });

    const held = hashesAndSalts();
    const days = held.visitors.filter(([, siteId]) => siteId === site.id);
    expect(days.map(([day]) => day)).toEqual(['2026-06-10', '2026-06-11']);
    // The same browser on the same network, another day: another hash.
    expect(days[0]![2]).not.toBe(days[1]![2]);
    expect(held.salts).toEqual(['2026-06-10', '2026-06-11']);

    // Two days on, no batch can be of day 1 or 2: their salts and hashes go, their counts stay.
    clock = DAY_1 + 3 * DAY;
    await server.flushAnalytics();
    expect(hashesAndSalts()).toEqual({ visitors: [], salts: [] });
    const later = await api(server, { path: `/v1/sites/${site.name}/analytics?from=2026-06-10&to=2026-06-13`, token: owner.token });
    expect(later.json.totals).toMatchObject({ page_views: 3, visitors: 2 });
  });
});
