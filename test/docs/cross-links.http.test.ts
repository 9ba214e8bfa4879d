import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';

/** The docs, the account app and the API point to each other by their real addresses. */

const server = useTestServer({
  PLINTH_PUBLIC_DOCS_URL: 'http://localhost:9123',
  PLINTH_PUBLIC_APP_URL: 'http://app.localhost:9123',
  PLINTH_PUBLIC_API_URL: 'http://api.localhost:9123',
});

describe('links between the hosts', () => {
  it.each(['/', '/quick-start', '/no-such-page'])('docs page %s links to where people sign in', async (path) => {
    const page = await request({ port: server.port, host: 'localhost', path });
    expect(page.text).toContain('href="http://app.localhost:9123/login">Sign in</a>');
    expect(page.text).toContain('href="http://app.localhost:9123/">the account app</a>');
  });

  it('links every app page to the docs', async () => {
    const page = await request({ port: server.port, host: 'app.localhost', path: '/login' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="http://localhost:9123/">Plinth docs</a>');
  });

  it.each(['/', '/v1', '/v2/deploy'])('answers an address of the API that is no endpoint (%s) with where the docs are', async (path) => {
    const res = await request({ port: server.port, host: 'api.localhost', path });
    expect(res.status).toBe(404);
    const body = JSON.parse(res.text) as { agent_message: string };
    expect(body.agent_message).toContain('http://localhost:9123/llms.txt');
    expect(body.agent_message).toContain('http://localhost:9123/sites-api.md');
    expect(body.agent_message).not.toContain('see the docs host');
  });
});
