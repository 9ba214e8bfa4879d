import { rmSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { callApi } from '../helpers/http.js';
import { rpc } from './mcp-helpers.js';

/**
 * A small `deploy_site` call goes to the ingest worker in memory, as a REST JSON deploy of known
 * size does: nothing of it touches the spool directory. The test makes that directory unusable
 * (a plain file where it was): a call that wrote its arguments to a file there would fail.
 */

let token: string;

const server = useTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '0' });

beforeAll(async () => {
  token = (await accountWithToken(server.store)).token;
  rmSync(server.config.spoolDir, { recursive: true, force: true });
  writeFileSync(server.config.spoolDir, 'not a directory');
});

const files = (title: string) => [{ path: 'index.html', content: `<h1>${title}</h1>` }];

describe('small deploys never touch the spool directory', () => {
  it('MCP deploy_site publishes with its arguments in memory', async () => {
    const res = await rpc(server, {
      token,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deploy_site', arguments: { files: files('mcp') } } },
    });
    expect(res.status).toBe(200);
    expect(res.json.result.isError, JSON.stringify(res.json.result)).toBeFalsy();
    expect(res.json.result.structuredContent.revision.files).toBe(1);
  });

  it('a REST JSON deploy of known size, the same', async () => {
    const res = await callApi(server.port, { method: 'POST', path: '/v1/deploy', token, body: { files: files('rest') } });
    expect(res.status, res.text).toBe(201);
  });
});
