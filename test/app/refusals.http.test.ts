import { describe, expect, it } from 'vitest';
import { api } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { startAppServer } from './browser.js';
import { AppClient } from './http-client.js';

/**
 * App refusals that are limits rather than attacks, over HTTP, on a server whose clock the tests
 * move. The attacks on the app (sign-in, sessions, CSRF, redirects, hostile input) are in
 * test/security/.
 */

let clock = Date.now();
let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

const server = useAppServer({}, { now: () => clock });

describe('links that no longer work', () => {
  it('an expired claim link gets a clear page and claims nothing', async () => {
    const deploy = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>late</h1>' }] } });
    const client = new AppClient(server);
    await client.signIn(email('lateclaim'));
    clock += 72 * 3600_000 + 1;
    const path = new URL(deploy.json.claim_url).pathname;
    const page = await client.get(path);
    expect(page.status).toBe(410);
    expect(page.text).toContain('This site has expired');
    const post = await client.post(path, { csrf: await client.formToken('/') });
    expect(post.status).toBe(410);
    expect((await client.get('/')).text).not.toContain(deploy.json.site.name);
  });
});

describe('reports', () => {
  it('are capped per network', async () => {
    const capped = await startAppServer({ PLINTH_REPORTS_PER_HOUR: '1' });
    try {
      const deploy = await api(capped, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
      const name = deploy.json.site.name as string;
      const client = new AppClient(capped);
      const send = async () => client.post(`/report/${name}`, { reason: 'spam', details: 'spam', csrf: await client.formToken(`/report/${name}`) });
      expect((await send()).status).toBe(303);
      const second = await send();
      expect(second.status).toBe(429);
      expect(second.text).toContain('Too many reports');
    } finally {
      await capped.close();
    }
  });
});
