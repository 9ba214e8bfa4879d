import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectClient, structured, textOf } from './mcp-helpers.js';

/**
 * A refusal REST answers 429 or 503 with `Retry-After` says over MCP how long to wait, through the
 * MCP SDK's own client against the real server: a tool result has no headers to carry it.
 */

let owner: TestAccount;
let client: Client;
let site: string;

// Invites are capped at one e-mail an hour per account, and the mail server refuses connections,
// so the first invite fails to send (503, Retry-After 60) and the second is over the cap (429).
const server = useTestServer({ PLINTH_INVITE_EMAILS_PER_ACCOUNT: '1', PLINTH_SMTP_URL: 'smtp://127.0.0.1:1' });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, owner.token);
  const deployed = structured<{ site: { name: string } }>(
    await client.callTool({ name: 'deploy_site', arguments: { files: [{ path: 'index.html', content: '<h1>wait</h1>' }] } }),
  );
  site = deployed.site.name;
});

afterAll(async () => {
  await client?.close();
});

const invite = (email: string) => client.callTool({ name: 'invite_member', arguments: { site, email, role: 'viewer' } });

describe('a tool refused for a while', () => {
  it('says how many seconds to wait when the service cannot do it now (503 unavailable on REST)', async () => {
    const result = await invite('first@example.com');
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^unavailable: /);
    expect(text).toContain('Retry-After: 60 seconds.');
  });

  it('says how many seconds to wait when a rate limit refuses it (429 limit on REST)', async () => {
    const result = await invite('second@example.com');
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^limit: /);
    const seconds = Number(/Retry-After: (\d+) seconds\./.exec(text)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(3600);
  });

  it('says nothing of waiting for a refusal that waiting does not cure', async () => {
    const result = await client.callTool({ name: 'get_site', arguments: { site: 'no-such-site-here' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toContain('Retry-After:');
  });
});

describe('a request over the rate limit', () => {
  let limited: TestServer;

  beforeAll(async () => {
    limited = await startTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '3' });
  });

  afterAll(async () => {
    await limited?.close();
  });

  it('is refused with the seconds to wait in the JSON-RPC error data as retry_after', async () => {
    const person = await accountWithToken(limited.store, 'builder');
    // initialize and its notification are two requests; the first call is the third.
    const limitedClient = await connectClient(`http://mcp.localhost:${limited.port}/mcp`, person.token);
    try {
      expect((await limitedClient.callTool({ name: 'get_account', arguments: {} })).isError).toBeFalsy();
      const refused = await limitedClient.callTool({ name: 'get_account', arguments: {} }).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: number },
      );
      expect(refused?.code).toBe(429);
      const body = JSON.parse(refused!.message.slice(refused!.message.indexOf('{'))) as { error: { data: { code: string; retry_after: number } } };
      expect(body.error.data.code).toBe('limit');
      expect(body.error.data.retry_after).toBeGreaterThanOrEqual(1);
      expect(body.error.data.retry_after).toBeLessThanOrEqual(60);
    } finally {
      await limitedClient.close();
    }
  });
});
