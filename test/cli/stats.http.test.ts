import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../src/rules/index.js';
import { accountSite, accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { runCli } from './run-cli.js';
import { waitUntil } from '../helpers/wait.js';

/** `plinth stats` through the built command against a real server that counted real visits. */

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
let owner: TestAccount;

const server = useTestServer(() => ({ PLINTH_ANALYTICS_FLUSH_MS: '100' }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const plinth = (dir: string, ...args: string[]) => runCli(server.port, args, { cwd: dir, env: { PLINTH_TOKEN: owner.token } });

describe('plinth stats', () => {
  it('shows the counted visits of the folder’s site, per day and in total, with its top pages and referrers', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>Stats</h1>', 'about.html': '<h1>About</h1>' } });
    const dir = tempDir('plinth-cli-stats-');
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ site: site.name, url: `http://${site.name}.sites.localhost`, revision: site.revision }));
    const browse = (path: string, headers: Record<string, string> = {}) =>
      request({ port: server.port, host: `${site.name}.sites.localhost`, path, headers: { 'user-agent': FIREFOX, ...headers } });
    await browse('/', { referer: 'https://news.example.net/story' });
    await browse('/about');
    await browse('/');
    await browse('/gone.png');

    let json: any;
    expect(
      await waitUntil(
        async () => {
          json = JSON.parse((await plinth(dir, 'stats', '--json')).stdout);
          return json.totals.page_views === 3 && json.totals.not_found === 1;
        },
        10_000,
        100,
      ),
    ).toBe(true);
    expect(json).toMatchObject({ site: site.name, to: utcDay(Date.now()), totals: { page_views: 3, visitors: 1, not_found: 1 } });

    const today = utcDay(Date.now());
    const shown = await plinth(dir, 'stats', '--from', today);
    expect(shown.status).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toBe(`${site.name}, ${today} to ${today} (UTC)`);
    expect(lines[1]).toMatch(/^3 page views, 1 visitor, 1 not found, \d+ B served, 0 crawler views$/);
    expect(shown.stdout).toMatch(new RegExp(`${today}\\s+3\\s+1\\s+1\\s+\\d+ B`));
    expect(shown.stdout).toMatch(/VIEWS\s+PAGE\n2\s+\/\n1\s+\/about/);
    expect(shown.stdout).toMatch(/VISITS\s+FROM\n1\s+news\.example\.net/);

    const refused = await plinth(dir, 'stats', '--from', 'last-week');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('Reading analytics failed (400 bad_request)');
    expect(refused.stderr).toContain('"from" must be a date as YYYY-MM-DD');
  });
});
