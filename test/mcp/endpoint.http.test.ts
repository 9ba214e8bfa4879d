import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { INITIALIZE, rpc } from './mcp-helpers.js';
import { declaredButUnsent } from '../helpers/http.js';

/** The MCP endpoint as HTTP: what clients usually hide (status codes, headers, CORS, limits). */

let owner: TestAccount;
let mcp: string;

const server = useAppServer({ PLINTH_MCP_ALLOWED_ORIGINS: 'https://inspector.example' });

beforeAll(async () => {
  mcp = `http://mcp.localhost:${server.port}`;
  owner = await accountWithToken(server.store, 'builder');
});

describe('authentication', () => {
  it.each([
    ['/mcp', '/.well-known/oauth-protected-resource/mcp'],
    ['/', '/.well-known/oauth-protected-resource'],
  ])('answers %s without a token with 401 pointing at its resource metadata', async (path, metadata) => {
    const res = await rpc(server, { path, body: INITIALIZE });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${mcp}${metadata}", scope="sites"`);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, data: { code: 'unauthorized' } } });
  });

  it('answers an unknown or malformed token with error="invalid_token"', async () => {
    for (const token of ['pl_nope', 'pla_nope', 'st_nope', 'garbage']) {
      const res = await rpc(server, { token, body: INITIALIZE });
      expect(res.status, token).toBe(401);
      expect(res.headers['www-authenticate'], token).toMatch(
        /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/mcp\.localhost:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
    }
  });

  it.each([
    ['/.well-known/oauth-protected-resource', '/'],
    ['/.well-known/oauth-protected-resource/mcp', '/mcp'],
  ])('serves %s with its own resource and the app as authorization server', async (path, resource) => {
    const res = await rpc(server, { method: 'GET', path });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.json).toMatchObject({
      resource: `${mcp}${resource}`,
      authorization_servers: [server.appUrl],
      scopes_supported: ['sites'],
      bearer_methods_supported: ['header'],
    });
  });
});

describe('transport', () => {
  it('serves / and /mcp alike, statelessly, with JSON responses and no session id', async () => {
    for (const path of ['/', '/mcp']) {
      const res = await rpc(server, { path, token: owner.token, body: INITIALIZE });
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['mcp-session-id']).toBeUndefined();
      expect(res.json.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'plinth' }, capabilities: { tools: {} } });
    }
    // No initialize first: every request stands alone.
    const list = await rpc(server, {
      token: owner.token,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      headers: { 'mcp-protocol-version': '2025-11-25' },
    });
    expect(list.status).toBe(200);
    expect(list.json.result.tools).toHaveLength(26);
    const note = await rpc(server, { token: owner.token, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    expect(note.status).toBe(202);
  });

  it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('negotiates protocol revision %s', async (version) => {
    const res = await rpc(server, { token: owner.token, body: { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: version } } });
    expect(res.json.result.protocolVersion).toBe(version);
  });

  it.each(['GET', 'DELETE', 'PUT'])('answers %s with 405', async (method) => {
    const res = await rpc(server, { method, token: owner.token });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, OPTIONS');
    expect(res.json.error).toMatchObject({ code: -32000 });
  });

  it('answers CORS preflights without a token', async () => {
    const res = await rpc(server, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:6274');
    for (const header of ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'mcp-method', 'mcp-name']) {
      expect(res.headers['access-control-allow-headers']).toContain(header);
    }
    const answer = await rpc(server, { token: owner.token, body: INITIALIZE, headers: { origin: 'https://inspector.example' } });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('https://inspector.example');
    expect(answer.headers['access-control-expose-headers']).toContain('www-authenticate');
  });

  it('refuses a request from a foreign origin with 403 (DNS rebinding)', async () => {
    for (const origin of ['http://evil.example', 'null', 'http://mcp.localhost.evil.example']) {
      const res = await rpc(server, { token: owner.token, body: INITIALIZE, headers: { origin } });
      expect(res.status, origin).toBe(403);
    }
    expect((await rpc(server, { token: owner.token, body: INITIALIZE, headers: { origin: server.appUrl } })).status).toBe(200);
  });

  it('answers invalid JSON with a JSON-RPC parse error', async () => {
    const res = await rpc(server, { token: owner.token, headers: { 'content-type': 'application/json' }, body: undefined, method: 'POST' });
    expect(res.status).toBe(400);
    const broken = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/mcp',
          headers: {
            host: 'mcp.localhost',
            authorization: `Bearer ${owner.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end('{"jsonrpc": "2.0", "id": 1, "method": ');
    });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text).error.code).toBe(-32700);
  });

  it('refuses a Content-Length over 40 MB with 413 as a JSON-RPC error', async () => {
    const res = await declaredButUnsent({
      port: server.port,
      host: 'mcp.localhost',
      path: '/mcp',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      declaredBytes: 200 * 1024 * 1024,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, data: { code: 'too_large' } } });
  });

  it('answers unknown paths with 404 in the service error shape', async () => {
    const res = await rpc(server, { path: '/sse', token: owner.token, body: INITIALIZE });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: 'not_found' } });
  });
});
