import { execFile } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Tools we did not write, run as their own processes against the running server: the MCP
 * Inspector's CLI, and the official conformance suite's server scenarios (with a baseline of
 * the scenarios that test features Plinth does not offer). Node resolves no `*.localhost` name,
 * so this server answers MCP on 127.0.0.1.
 */

const run = promisify(execFile);
const bin = (name: string): string => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));
const BASELINE = fileURLToPath(new URL('./conformance-baseline.yml', import.meta.url));

let owner: TestAccount;
let url: string;

const server = useAppServer({ PLINTH_MCP_HOST: '127.0.0.1' });

beforeAll(async () => {
  url = `http://127.0.0.1:${server.port}/mcp`;
  owner = await accountWithToken(server.store, 'builder');
});

async function inspector(...args: string[]): Promise<any> {
  const { stdout } = await run(bin('mcp-inspector'), ['--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${owner.token}`, ...args], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.slice(stdout.indexOf('{')));
}

describe('MCP Inspector CLI', () => {
  it('lists the tools', async () => {
    const listed = await inspector('--method', 'tools/list');
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toContain('deploy_site');
    expect(listed.tools).toHaveLength(26);
  });

  it('deploys a site and reads it back', async () => {
    const deployed = await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'deploy_site',
      '--tool-arg',
      `files=${JSON.stringify([{ path: 'index.html', content: '<h1>From the Inspector</h1>' }])}`,
    );
    expect(deployed.isError).toBeFalsy();
    const name = deployed.structuredContent.site.name as string;
    const file = await inspector('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', `site=${name}`, '--tool-arg', 'path=index.html');
    expect(file.structuredContent).toMatchObject({ encoding: 'utf8', content: '<h1>From the Inspector</h1>' });
  });
});

describe('MCP conformance suite (server scenarios)', () => {
  let proxy: Server;
  let proxyPort: number;

  beforeAll(async () => {
    // The suite connects without credentials; this loopback hop adds the API token and leaves
    // everything else (Host, Origin) as the suite sent it.
    proxy = createServer((req, res) => {
      const upstream = httpRequest(
        { host: '127.0.0.1', port: server.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${owner.token}` } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it('passes every scenario that applies (initialize, ping, tools/list, DNS rebinding protection)', async () => {
    const outcome = await run(bin('conformance'), ['server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--expected-failures', BASELINE], {
      timeout: 120_000,
    }).then(
      (ok) => ({ code: 0, out: ok.stdout }),
      (err: { code?: number; stdout?: string }) => ({ code: err.code ?? 1, out: err.stdout ?? '' }),
    );
    expect(outcome.out).toMatch(/✓ server-initialize: \d+ passed, 0 failed/);
    expect(outcome.out).toMatch(/✓ ping: \d+ passed, 0 failed/);
    expect(outcome.out).toMatch(/✓ tools-list: \d+ passed, 0 failed/);
    expect(outcome.out).toMatch(/✓ dns-rebinding-protection: 2 passed, 0 failed/);
    expect(outcome.out, outcome.out.slice(-1500)).toContain('Baseline check passed');
    expect(outcome.code).toBe(0);
  });
});
