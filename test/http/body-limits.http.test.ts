import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { inToolWords } from '../../src/mcp/tool-words.js';
import { MAX_JSON_BODY_BYTES, MAX_MCP_REQUEST_BYTES, MAX_REQUEST_BYTES } from '../../src/rules/index.js';
import { bodyTooSlow, requestTooLarge, smallBodyLimit } from '../../src/sites/index.js';
import { accountWithToken } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { callApi } from '../helpers/http.js';
import { AppClient } from '../app/http-client.js';

/**
 * One intake, one refusal per limit: a body over the one-request cap (declared, or chunked and
 * counted as it arrives) and a body slower than the deadline get the same status and the same
 * words on every edge that takes a deploy: the REST API, the app's drop page (its script's
 * JSON) and MCP (the same words, in tool words, inside a JSON-RPC error). The words are the
 * operations' own (sites/body-limits.ts), so this also holds them to what the docs quote.
 */

const MB = 1024 * 1024;
const DEADLINE_S = 2;
let token: string;
let app: { cookie: string; csrf: string };

const server = useAppServer({ PLINTH_UPLOAD_TIMEOUT_S: String(DEADLINE_S), PLINTH_API_RATE_PER_CREDENTIAL: '0' });

beforeAll(async () => {
  token = (await accountWithToken(server.store)).token;
  const client = new AppClient(server);
  const csrf = await client.formToken('/publish');
  app = { cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '), csrf };
});

type Edge = 'rest' | 'app' | 'mcp';

/** Where each edge takes a deploy, and what its client sends besides the body. */
function target(edge: Edge): { host: string; path: string; headers: Record<string, string> } {
  const port = server.port;
  if (edge === 'rest')
    return { host: `api.localhost:${port}`, path: '/v1/deploy', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' } };
  if (edge === 'app') {
    return {
      host: `app.localhost:${port}`,
      path: '/publish',
      headers: { cookie: app.cookie, origin: server.appUrl, accept: 'application/json', 'x-csrf-token': app.csrf, 'content-type': 'application/gzip' },
    };
  }
  return {
    host: `mcp.localhost:${port}`,
    path: '/mcp',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  };
}

type Sending =
  /** Declares `bytes` and sends 1 KB of them. */
  | { kind: 'declared'; bytes: number }
  /** Chunked: sends up to `bytes`, as fast as the server takes them, until it answers. */
  | { kind: 'chunked'; bytes: number }
  /** Declares 64 KB, sends 1 KB, and waits. */
  | { kind: 'stalled' };

/** The edge's answer: its status and the refusal as `{message, agent_message}`. */
async function send(edge: Edge, sending: Sending): Promise<{ status: number; message: string; agent_message?: string }> {
  const { host, path, headers } = target(edge);
  const framing =
    sending.kind === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(sending.kind === 'declared' ? sending.bytes : 64 * 1024) };
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'POST', path, headers: { host, ...headers, ...framing }, agent: false });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    // A write error after the answer began is the server closing on the unread rest.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(MB, 0x61);
    if (sending.kind !== 'chunked') return void req.write(chunk.subarray(0, 1024));
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < sending.bytes) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
    setTimeout(() => reject(new Error(`${edge}: no answer`)), 25_000).unref();
  });
  const json = JSON.parse(answer.text);
  if (edge !== 'mcp') return { status: answer.status, message: json.error.message, agent_message: json.agent_message };
  expect(json.error.code).toBe(-32600);
  return { status: answer.status, message: json.error.message, agent_message: json.error.data?.agent_message };
}

/** The operations' refusal as an edge words it: MCP names tools where REST names calls. */
function expected(edge: Edge, err: { message: string; agentMessage?: string; status: number }): { status: number; message: string; agent_message?: string } {
  const words = edge === 'mcp' ? inToolWords : (text: string): string => text;
  return { status: err.status, message: words(err.message), agent_message: err.agentMessage && words(err.agentMessage) };
}

const capOf = (edge: Edge): number => (edge === 'mcp' ? MAX_MCP_REQUEST_BYTES : MAX_REQUEST_BYTES);

/**
 * The edge's answer is the operations' refusal; the drop page, sent by a signed-out visitor, may
 * add after it what signing in allows (docs/account-app.md).
 */
function expectAlike(edge: Edge, got: Awaited<ReturnType<typeof send>>, want: ReturnType<typeof expected>): void {
  if (edge !== 'app') return void expect(got).toEqual(want);
  expect({ ...got, message: got.message.slice(0, want.message.length) }).toEqual(want);
}

/**
 * The declared and the stalled bodies mostly wait (the server reads on for a moment after
 * refusing a declared body; a stalled one waits out the deadline): the three edges of each run
 * side by side. The chunked ones send 90 MB each, one at a time, well within the deadline.
 */
describe('every edge answers each body limit alike', () => {
  it.concurrent.each(['rest', 'app', 'mcp'] as const)('%s: a body declared over the one-request cap', async (edge) => {
    expectAlike(edge, await send(edge, { kind: 'declared', bytes: capOf(edge) + 1024 * 1024 }), expected(edge, requestTooLarge(capOf(edge))));
  });

  it.each(['rest', 'app', 'mcp'] as const)('%s: a chunked body that grows over the one-request cap', async (edge) => {
    expectAlike(edge, await send(edge, { kind: 'chunked', bytes: capOf(edge) + 2 * MB }), expected(edge, requestTooLarge(capOf(edge))));
  });

  it.concurrent.each(['rest', 'app', 'mcp'] as const)('%s: a body that does not arrive within the deadline', async (edge) => {
    expect(await send(edge, { kind: 'stalled' })).toEqual(expected(edge, bodyTooSlow(DEADLINE_S * 1000)));
  });

  it('the one-request refusal names the cap and the way to send a larger site, the same on the REST API and in tool words', () => {
    const rest = requestTooLarge(MAX_REQUEST_BYTES);
    expect(rest.message).toBe('One request can carry at most 90 MB.');
    expect(rest.agentMessage).toContain('POST /v1/deploy/manifest');
    const mcp = inToolWords(requestTooLarge(MAX_MCP_REQUEST_BYTES).agentMessage!);
    expect(mcp).toContain('start_deploy');
    expect(mcp).toContain('deploy_site {"manifest": "<id>"}');
    expect(mcp).not.toContain('/v1/');
  });
});

describe('small bodies: one refusal on the REST API and the app', () => {
  const tooLarge = (): string => smallBodyLimit(server.config).tooLarge().message;

  it('a JSON body over 64 KB on the REST API', async () => {
    const res = await callApi(server.port, {
      method: 'POST',
      path: '/v1/sites/some-site/rollback',
      token,
      body: { revision: 'x'.repeat(MAX_JSON_BODY_BYTES) },
    });
    expect(res.status).toBe(413);
    expect(res.json.error.message).toBe(tooLarge());
  });

  it('a form over 64 KB on the app', async () => {
    const client = new AppClient(server);
    const res = await client.post('/login', { email: 'x'.repeat(MAX_JSON_BODY_BYTES), csrf: await client.formToken('/login') });
    expect(res.status).toBe(413);
    expect(res.text).toBe(tooLarge());
  });
});
