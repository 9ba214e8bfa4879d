import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

// A cached site record is read again only after a change: one made in this process arrives on the
// change feed, one made by another process (the admin CLI) moves its mark in the store. Re-reading
// every cached record on a timer cost a 10,000-site rotation about 30% of its throughput.

const get = (site: string, path = '/') => request({ port: server.port, host: `${site}.sites.localhost`, path });

const server = useTestServer({});

beforeAll(async () => {
  for (const name of ['steady', 'other']) await publishSite(server.store, name, { 'index.html': `<h1>${name}</h1>` });
});

afterAll(async () => {
  vi.restoreAllMocks();
});

it('serves a cached site for well over a second without reading its record again', async () => {
  expect((await get('steady')).status).toBe(200);
  const reads = vi.spyOn(server.store, 'getSite');
  const until = Date.now() + 1500;
  let served = 0;
  while (Date.now() < until) {
    expect((await get('steady')).status).toBe(200);
    served++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(served).toBeGreaterThan(10);
  expect(reads).not.toHaveBeenCalled();

  // A change made in this process is seen at once, and only that site is read again.
  await server.store.setSiteState('steady', 'taken_down');
  expect((await get('steady')).status).toBe(451);
  expect(reads.mock.calls.map(([name]) => name)).toEqual(['steady']);
  await server.store.setSiteState('steady', 'active');
  expect((await get('steady')).status).toBe(200);
});
