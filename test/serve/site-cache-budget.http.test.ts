import { beforeAll, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

// With both per-thread caches at 0 every request reads the site record and resolves its path
// again: serving must stay correct, only slower (the budgets bound memory, not behaviour).

const get = (site: string, path = '/') => request({ port: server.port, host: `${site}.sites.localhost`, path });
const page = (text: string) => `<!doctype html><html><body><h1>${text}</h1></body></html>`;

const server = useTestServer({ PLINTH_SITE_CACHE_MB: '0', PLINTH_CACHE_MB: '0' });

beforeAll(async () => {
  for (const name of ['alpha', 'beta', 'gamma']) await publishSite(server.store, name, { 'index.html': page(name), 'about.html': page(`${name} about`) });
});

it('serves every site and path correctly with no site or body cache', async () => {
  for (let round = 0; round < 3; round++) {
    for (const name of ['alpha', 'beta', 'gamma']) {
      expect((await get(name)).text).toContain(`<h1>${name}</h1>`);
      expect((await get(name, '/about')).text).toContain(`${name} about`);
      expect((await get(name, `/missing-${round}.png`)).status).toBe(404);
    }
  }
});

it('shows a new revision at once', async () => {
  const { store } = server;
  const before = store.getSite('beta')!;
  const files = new Map([['index.html', await store.blobs.putFile(Buffer.from(page('beta two')), 'text/html; charset=utf-8', { compress: false })]]);
  const next = await store.commitRevision({ site: 'beta', baseRevision: before.liveRevision!, files, kind: 'deploy', createdBy: 'admin' });
  expect(next.ok).toBe(true);
  expect((await get('beta')).text).toContain('beta two');
  // No about.html any more: the single-page fallback answers with the new index.
  expect((await get('beta', '/about')).text).toContain('beta two');
});
