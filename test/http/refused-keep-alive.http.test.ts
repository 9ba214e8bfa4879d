import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * A request refused before its body was read (a bad token, an unknown manifest, a refused
 * manifest's next part) leaves its connection usable: the body is read to its end, the answer
 * goes out, and the next request on the same keep-alive connection is answered. Clients that
 * keep connections open (fetch, `plinth deploy`, browsers) otherwise see a reset or a hang on
 * the request after a refusal.
 */

let token: string;

// A body that comes 100 ms after its refusal is still read on, however busy the machine.
const server = useTestServer({ PLINTH_LINGER_IDLE_MS: '2000' });

beforeAll(async () => {
  token = (await accountWithToken(server.store)).token;
});

interface Exchange {
  /** The status lines the server sent, in order. */
  statuses: number[];
  /** The connection ended with a reset. */
  reset: boolean;
}

/**
 * On one connection: a POST with `body` (sent with its headers, or `bodyAfterMs` later), then
 * once its answer has arrived a GET of `/v1/me`; resolves with every answer that came.
 */
function postThenGet(path: string, headers: Record<string, string>, body: string, bodyAfterMs?: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    let reset = false;
    let asked = false;
    const statuses = (): number[] => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ statuses: statuses(), reset });
    };
    const timer = setTimeout(finish, 3000);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') return reject(err);
      reset = true;
    });
    socket.on('close', finish);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const count = statuses().length;
      if (count === 1 && !asked && /\r\n\r\n/.test(received)) {
        asked = true;
        // The answer's body may still be on its way; the GET follows it on the same connection.
        setTimeout(() => socket.write(`GET /v1/me HTTP/1.1\r\nHost: api.localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`), 50);
      } else if (count === 2) setTimeout(finish, 50);
    });
    const head =
      `POST ${path} HTTP/1.1\r\nHost: api.localhost\r\n` +
      Object.entries({ ...headers, 'Content-Length': String(Buffer.byteLength(body)) })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      '\r\n';
    if (bodyAfterMs === undefined) socket.write(head + body);
    else {
      socket.write(head);
      setTimeout(() => socket.write(body), bodyAfterMs);
    }
  });
}

const json = { 'Content-Type': 'application/json' };
const files = JSON.stringify({ files: [{ path: 'index.html', content: '<h1>Hi</h1>' }] });

describe('a request refused before its body is read keeps its connection', () => {
  it.each([
    ['a deploy with an unknown token', '/v1/deploy', { ...json, Authorization: 'Bearer pl_nosuchtoken' }, 401],
    ['an archive deploy to a site that does not exist', '/v1/deploy?site=no-such-site-1', { 'Content-Type': 'application/gzip' }, 404],
    ['a part for a manifest that does not exist', '/v1/deploy?manifest=mf_nosuchmanifest', json, 404],
    ['a manifest with an unknown token', '/v1/deploy/manifest', { ...json, Authorization: 'Bearer pl_nosuchtoken' }, 401],
  ])('%s: the answer, then the next request on the same connection', async (_, path, headers, status) => {
    const withToken = 'Authorization' in headers ? headers : { ...headers, Authorization: `Bearer ${token}` };
    const together = await postThenGet(path, withToken, files);
    expect(together).toEqual({ statuses: [status, 200], reset: false });
    // The body arrives only after the refusal was decided: read on, answered, connection kept.
    const later = await postThenGet(path, withToken, files, 100);
    expect(later).toEqual({ statuses: [status, 200], reset: false });
  });

  it('a refused manifest answers its next part, and then its GET, on one connection', async () => {
    const secret = 'aws_access_key_id = AKIAQ3EGV7XM' + 'JS2PLN5R\n';
    const contents = [
      ['index.html', '<h1>Home</h1>'],
      ['notes.txt', secret],
    ] as const;
    const { createHash } = await import('node:crypto');
    const entries = contents.map(([path, content]) => ({ path, size: Buffer.byteLength(content), sha256: createHash('sha256').update(content).digest('hex') }));
    const auth = { ...json, Authorization: `Bearer ${token}` };
    const made = await fetchJson('/v1/deploy/manifest', auth, JSON.stringify({ files: entries }));
    expect(made.status).toBe(201);
    const id = (made.body as { manifest: string }).manifest;
    const refused = await fetchJson(`/v1/deploy?manifest=${id}`, auth, JSON.stringify({ files: [{ path: 'notes.txt', content: secret }] }));
    expect(refused.status).toBe(422);
    const next = await postThenGet(`/v1/deploy?manifest=${id}`, auth, JSON.stringify({ files: [{ path: 'index.html', content: '<h1>Home</h1>' }] }));
    expect(next).toEqual({ statuses: [422, 200], reset: false });
  });
});

/** One request on its own connection. */
async function fetchJson(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: unknown }> {
  const exchange = await new Promise<string>((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
    const lines = Object.entries({ ...headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' }).map(
      ([name, value]) => `${name}: ${value}\r\n`,
    );
    socket.write(`POST ${path} HTTP/1.1\r\nHost: api.localhost\r\n${lines.join('')}\r\n${body}`);
  });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(exchange)?.[1]);
  return { status, body: JSON.parse(exchange.slice(exchange.indexOf('\r\n\r\n') + 4)) };
}
