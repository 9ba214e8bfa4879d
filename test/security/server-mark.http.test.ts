import { describe, expect, it } from 'vitest';
import { accountSite, accountWithToken } from '../api/api-helpers.js';
import { request, type TestResponse } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * Issue 33: every answer carried `uWebSockets: 20`, naming the server and its major version to
 * anyone who asked, on the sites' own pages too. No host sends it now: pages, files, redirects,
 * errors, refusals, the API, MCP, the app and the docs.
 */

const server = useTestServer({ PLINTH_API_RATE_PER_NETWORK: '0' });

const send = (host: string, path: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Promise<TestResponse> =>
  request({ port: server.port, host, path, method, headers, body });

describe('no answer names the HTTP server', () => {
  it('on every host, for pages, redirects, errors and refusals alike', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = (await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>x</h1>', 'docs/index.html': '<h1>d</h1>' } })).name;
    const answers: Array<[string, TestResponse]> = [
      ['site page', await send(`${site}.sites.localhost`, '/')],
      ['site folder redirect', await send(`${site}.sites.localhost`, '/docs')],
      ['site 404', await send(`${site}.sites.localhost`, '/nothing.css')],
      ['site HEAD', await send(`${site}.sites.localhost`, '/', 'HEAD')],
      ['unknown site', await send('no-such-site-here.sites.localhost', '/')],
      ['bad path', await send(`${site}.sites.localhost`, '/%2e%2e/x')],
      ['API', await send('api.localhost', `/v1/sites/${site}`, 'GET', { authorization: `Bearer ${owner.token}` })],
      ['API 401', await send('api.localhost', '/v1/me')],
      ['API bad body', await send('api.localhost', '/v1/deploy', 'POST', { 'content-type': 'application/json' }, '{')],
      ['MCP', await send('mcp.localhost', '/mcp', 'POST', { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, '{}')],
      ['app', await send('app.localhost', '/login')],
      ['docs', await send('localhost', '/')],
      ['unknown host', await send('elsewhere.example', '/')],
    ];
    for (const [what, res] of answers) {
      expect(res.status, what).toBeGreaterThan(0);
      expect(
        Object.keys(res.headers).filter((name) => name.toLowerCase() === 'uwebsockets'),
        what,
      ).toEqual([]);
    }
  });
});
