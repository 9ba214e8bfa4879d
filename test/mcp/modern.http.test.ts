import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { loopbackFetch } from './loopback-fetch.js';

/**
 * The 2026-07-28 protocol revision, driven by that era's client (`@modelcontextprotocol/client`
 * 2.x): each request carries its own envelope, the server answers statelessly in JSON.
 */

let owner: TestAccount;
let url: URL;
const MB = 1024 * 1024;

const server = useAppServer();

beforeAll(async () => {
  url = new URL(`http://mcp.localhost:${server.port}/mcp`);
  owner = await accountWithToken(server.store, 'builder');
});

async function connect(mode: 'auto' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'modern-tests', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: loopbackFetch, requestInit: { headers: { Authorization: `Bearer ${owner.token}` } } }));
  return client;
}

function structured<T>(result: { isError?: boolean; structuredContent?: unknown; content?: unknown }): T {
  if (result.isError) throw new Error(`tool refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

const text = (result: { content?: unknown }): string => (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');

describe('protocol revision 2026-07-28', () => {
  it.each([[{ pin: '2026-07-28' }], ['auto' as const]])('is negotiated by the 2.x client (%j)', async (mode) => {
    const client = await connect(mode);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(26);
      expect(structured(await client.callTool({ name: 'get_account', arguments: {} }))).toMatchObject({ email: owner.account.email });
    } finally {
      await client.close();
    }
  });

  it('deploys, patches on top, and reports a stale base as the REST conflict', async () => {
    const client = await connect({ pin: '2026-07-28' });
    try {
      const created = structured<{ site: { name: string }; revision: { id: string } }>(
        await client.callTool({ name: 'deploy_site', arguments: { files: [{ path: 'index.html', content: '<h1>modern</h1>' }] } }),
      );
      const patched = structured<{ revision: { number: number } }>(
        await client.callTool({
          name: 'deploy_site',
          arguments: { site: created.site.name, base_revision: created.revision.id, patch: true, files: [{ path: 'a.html', content: 'a' }] },
        }),
      );
      expect(patched.revision.number).toBe(2);
      const stale = await client.callTool({
        name: 'deploy_site',
        arguments: { site: created.site.name, base_revision: created.revision.id, files: [{ path: 'index.html', content: 'x' }] },
      });
      expect(stale.isError).toBe(true);
      expect(text(stale)).toMatch(/^conflict: /);
    } finally {
      await client.close();
    }
  });

  it('takes a large deploy through the spooled path', async () => {
    const client = await connect({ pin: '2026-07-28' });
    try {
      const big = Buffer.alloc(2 * MB, 9).toString('base64');
      const result = structured<{ revision: { files: number } }>(
        await client.callTool({
          name: 'deploy_site',
          arguments: {
            files: [
              { path: 'index.html', content: '<h1>big</h1>' },
              { path: 'big.bin', content: big, encoding: 'base64' },
            ],
          },
        }),
      );
      expect(result.revision.files).toBe(2);
    } finally {
      await client.close();
    }
  });
});
