import { writeFileSync, chmodSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/index.js';
import { GUIDE_DIR } from '../../src/docs/index.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';
import { accountWithToken } from '../api/api-helpers.js';
import { captureLines, compareJson, compareText, extractBlocks, ShellSession, valueAt, type Bindings, type BlockResult } from './example-runner.js';

/**
 * An agent that knows nothing but /llms.txt: it reads the index from the running server, follows
 * its links to the agent guide and the MCP guide as served (with this server's real addresses, on
 * a port that is not 8080), and makes the calls they state literally, with the real curl: no
 * address is rewritten. Every call must reach the API or the MCP server, and answer what the
 * guide shows. Then the steps a person does in the app (the claim) are done directly, and the
 * agent goes on as the claim poll's answer tells it.
 */

let server: TestServer;
let port: number;
const read = async (url: string): Promise<string> => {
  const { host, pathname } = new URL(url);
  const res = await request({ port, host, path: pathname });
  expect(res.status, url).toBe(200);
  return res.text;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: found } = probe.address() as { port: number };
      probe.close(() => resolve(found));
    });
  });
}

beforeAll(async () => {
  port = await freePort();
  server = await startTestServer({ PLINTH_PORT: String(port) });
});
afterAll(async () => {
  await server?.close();
});

/** `GET /v1/sites/<name>` and the like, as the guides write calls, against the API's routes. */
function isRoute(method: string, path: string): boolean {
  const segments = path.split('?')[0]!.split('/');
  return API_ROUTES.some((route) => {
    if (route.method !== method) return false;
    const parts = route.path.split('/');
    if (parts.at(-1)?.endsWith('...}')) return segments.length >= parts.length && parts.slice(0, -1).every((p, i) => p.startsWith('{') || p === segments[i]);
    return parts.length === segments.length && parts.every((p, i) => p.startsWith('{') || p === segments[i]);
  });
}

/** Runs a served guide's shell blocks as written, comparing each shown output. */
async function follow(session: ShellSession, markdown: string, guide: string, bindings: Bindings): Promise<BlockResult[]> {
  const blocks = extractBlocks(markdown);
  // Which answers are refusals the guide shows on purpose (a 409, a 401) is in its source's test
  // notes, which the served Markdown leaves out; the blocks are the same.
  const notes = extractBlocks(readFileSync(new URL(guide, GUIDE_DIR), 'utf8')).map((block) => block.note);
  expect(notes.length, guide).toBe(blocks.length);
  const results: BlockResult[] = [];
  let lastJson: unknown;
  for (const [index, block] of blocks.entries()) {
    // Set-up of programs other than this server (an app's MCP configuration) is for people.
    if (block.lang !== 'sh' || /^(claude |npx (?!plinth))/m.test(block.code)) continue;
    let code = block.code;
    for (const capture of captureLines(code)) {
      const value = valueAt(lastJson, capture.path);
      expect(typeof value, `${guide}: ${capture.line}`).toBe('string');
      if (capture.sample !== '' && !capture.sample.includes('…')) bindings.set(capture.sample, value as string);
      code = code.replace(capture.line, `${capture.name}='${value as string}'`);
    }
    const result = await session.run(code);
    results.push(result);
    const where = `${guide}, block ${index + 1}:\n${block.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
    expect(result.exitCode, where).toBe(0);
    const shown = blocks[index + 1];
    const refusal = notes[index]!.expectStatus;
    for (const [i, call] of result.calls.entries()) {
      const url = new URL(call.url);
      // Every address the guide gives is this server's own, port and all.
      // (A site's own address, or a revision's preview, is visited to check what was published.)
      const ownSite = url.hostname.endsWith('.sites.localhost') && url.port === String(server.port);
      // (The app host answers the device sign-in an agent may use to get an account token.)
      const origins = [server.config.publicUrls.api, server.config.publicUrls.mcp, server.config.publicUrls.docs, server.config.publicUrls.app];
      if (!ownSite) expect(origins, where).toContain(url.origin);
      if (url.origin === server.config.publicUrls.api) expect(isRoute(call.method, url.pathname), `${where}\n${call.method} ${url.pathname}`).toBe(true);
      const last = i === result.calls.length - 1;
      if (last && refusal !== undefined) expect(call.status, where).toBe(refusal);
      else expect(call.status >= 200 && call.status < 400, `${where}\n${call.method} ${call.url}: ${call.status} ${call.body}`).toBe(true);
    }
    const output = result.calls.at(-1)?.body.toString('utf8') ?? result.stdout;
    try {
      lastJson = JSON.parse(output);
    } catch {
      lastJson = undefined;
    }
    if (shown?.lang === 'json') expect(compareJson(JSON.parse(shown.code), JSON.parse(output), bindings), where).toEqual([]);
    if (shown?.lang === 'text') expect(compareText(shown.code, result.stdout, bindings), where).toEqual([]);
  }
  return results;
}

describe('an agent that reads only /llms.txt', () => {
  it('finds the agent guide and the MCP guide on this server, and every call the guides name exists', async () => {
    const index = await read(`${server.config.publicUrls.docs}/llms.txt`);
    const links = [...index.matchAll(/\]\((http[^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toContain(`${server.config.publicUrls.docs}/agent-guide.md`);
    expect(links).toContain(`${server.config.publicUrls.docs}/mcp.md`);
    for (const link of links.filter((l) => l.endsWith('.md'))) {
      const text = await read(link);
      // (The cluster example's upstream nodes are other machines, on a port of the example's choosing.)
      expect(
        text.split('\n').filter((line) => line.includes(':8080') && !line.includes('upstream plinth')),
        link,
      ).toEqual([]);
      for (const [, method, path] of text.matchAll(/`(GET|POST|DELETE) (\/v1\/[^`\s]*)`/g)) {
        // `<name>`, `$SITE`, `:name` and real names all stand for a segment.
        expect(isRoute(method!, path!.replace(/<[^>]+>|\$\{?[A-Z_]+\}?|:[a-z]+/g, 'x')), `${link}: ${method} ${path}`).toBe(true);
      }
    }
  });

  it('publishes, keeps .service.json, updates, recovers from a 409, rolls back, follows a claim and uses MCP, as the served guides say', async () => {
    const workDir = tempDir('plinth-llms-agent-');
    const session = new ShellSession(workDir, { port, dataDir: server.dataDir });
    // The real curl: the guides' addresses must work as written.
    writeFileSync(
      join(workDir, '.shims', 'curl'),
      readFileSync(join(workDir, '.shims', 'curl'), 'utf8').replace('--connect-to "::127.0.0.1:$EXAMPLES_PORT" ', ''),
    );
    chmodSync(join(workDir, '.shims', 'curl'), 0o755);
    const bindings: Bindings = new Map();
    try {
      const agentGuide = await read(`${server.config.publicUrls.docs}/agent-guide.md`);
      await session.run("mkdir -p my-site && echo '<h1>Hello</h1>' > my-site/index.html");
      await follow(session, agentGuide, 'agent-guide.md', bindings);

      // The person claims the anonymous site in the app; the agent polls as the guide says.
      const state = JSON.parse(readFileSync(join(workDir, '.service.json'), 'utf8')) as { site: string; site_token: string; revision: string };
      const site = server.store.getSite(state.site)!;
      const person = await accountWithToken(server.store, 'free');
      expect((await server.store.claimSite(site.claimTokenHash!, person.account.id)).ok).toBe(true);
      const poll = await request({
        port,
        host: new URL(server.config.publicUrls.api).host,
        path: `/v1/sites/${state.site}`,
        headers: { authorization: `Bearer ${state.site_token}` },
      });
      const answer = JSON.parse(poll.text) as { claimed: boolean; agent_message: string };
      expect(answer.claimed).toBe(true);
      expect(answer.agent_message).toContain('"api_token" in place of "site_token"');
      // It keeps the API token as told, and updates the site with the call the guide names.
      writeFileSync(join(workDir, '.service.json'), JSON.stringify({ site: state.site, url: site.name, revision: state.revision, api_token: person.token }));
      const update = await session.run(
        `tar czf site.tar.gz -C my-site . && curl -s -X POST --data-binary @site.tar.gz -H 'Content-Type: application/gzip' -H "Authorization: Bearer $(sed -E 's/.*"api_token":"([^"]+)".*/\\1/' .service.json)" -H "X-Base-Revision: $(sed -E 's/.*"revision":"([^"]+)".*/\\1/' .service.json)" "${server.config.publicUrls.api}/v1/deploy?site=${state.site}"`,
      );
      expect(update.calls.at(-1)?.status, update.stdout).toBe(201);

      const mcpGuide = await read(`${server.config.publicUrls.docs}/mcp.md`);
      const mcpCalls = (await follow(session, mcpGuide, 'mcp.md', bindings)).flatMap((r) => r.calls);
      expect(mcpCalls.some((call) => call.url.startsWith(server.config.publicUrls.mcp) && call.body.toString().includes('"structuredContent"'))).toBe(true);
    } finally {
      session.close();
    }
  });
});
