import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, api } from '../api/api-helpers.js';
import { request } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * Issue 33: `/old/* /new/:splat` took `/old/a/` to `/new/a`, which for a folder is one more
 * redirect and for a page whose links are relative to its folder a page with broken links.
 * Netlify keeps the slash; so does Plinth, deployed and served by the real server.
 */

const server = useTestServer();
let name: string;

beforeAll(async () => {
  const owner = await accountWithToken(server.store, 'builder');
  const files = { 'index.html': '<h1>x</h1>', 'new/a/index.html': '<h1>a</h1>', _redirects: '/old/*  /new/:splat  301\n' };
  const res = await api(server, {
    method: 'POST',
    path: '/v1/deploy',
    token: owner.token,
    body: { files: Object.entries(files).map(([path, content]) => ({ path, content })) },
  });
  expect(res.status, res.text).toBe(201);
  name = res.json.site.name;
});

describe('a splat redirect', () => {
  it.each([
    ['/old/a/', '/new/a/'],
    ['/old/a/b/', '/new/a/b/'],
    ['/old/a', '/new/a'],
    ['/old/a/?x=1', '/new/a/?x=1'],
  ])('%s → %s', async (path, location) => {
    const res = await request({ port: server.port, host: `${name}.sites.localhost`, path });
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe(location);
  });
});
