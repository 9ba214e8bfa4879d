import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookTransport, type WebhookTransportOptions } from '../../src/outbound/index.js';

/**
 * The webhook transport's fences that the API tests cannot time: the receiver's deadline covers
 * the whole attempt, the name's lookup included, and a refused target reads the same whichever
 * check refused it. DNS is stood in for (`lookup`); the only connections go to a receiver on
 * 127.0.0.1 that never answers.
 */

const TIMEOUT_MS = 1000;
/** Slack for a loaded machine: an attempt that honours its deadline ends well within this. */
const SLACK_MS = 600;

let server: Server;
let port: number;
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => void hanging.push(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const never = (): Promise<never> => new Promise(() => {});
const after = <T>(ms: number, value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

const transportWith = (lookup: WebhookTransportOptions['lookup']) =>
  createWebhookTransport({ allowLoopback: true, timeoutMs: TIMEOUT_MS, maxResponseBytes: 1024, lookup });

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await work;
  return { value, ms: performance.now() - start };
}

describe('the deadline of a delivery', () => {
  // A name whose DNS server never answers kept an attempt (and the deliverer's whole batch)
  // waiting for as long as the system resolver cared to try, past the delivery's lease.
  it('covers a name whose lookup never finishes', async () => {
    const { value, ms } = await timed(transportWith(never).send(`http://hooks.test:${port}/`, {}, '{}'));
    expect(value).toEqual({ error: 'timeout' });
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  it('counts the lookup against the receiver’s time: the attempt as a whole has the deadline', async () => {
    const slowName = transportWith(() => after(TIMEOUT_MS * 0.8, [{ address: '127.0.0.1', family: 4 }]));
    const { value, ms } = await timed(slowName.send(`http://hooks.test:${port}/`, {}, '{}'));
    expect(value).toEqual({ error: 'timeout' });
    // Before, the receiver's deadline started once the name was found: 1.8 s in all.
    expect(ms).toBeLessThan(TIMEOUT_MS + 400);
  });

  it('refuses to register a name whose lookup never finishes, within the deadline', async () => {
    const { value, ms } = await timed(transportWith(never).check(`https://hooks.test/`));
    expect(value).toEqual(expect.any(String));
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });
});

describe('a refused target', () => {
  // Which check refused is what the name leads to inside: an internal name that exists (a private
  // address) or not. The owner reads the attempt's error, so it says only that it was refused.
  it.each([
    ['a name that now leads to a private address', async () => [{ address: '10.0.0.1', family: 4 }]],
    ['a name that no longer resolves', () => Promise.reject(new Error('getaddrinfo ENOTFOUND hooks.test'))],
    ['a name with no addresses', async () => []],
  ])('reads the same for %s, with the reason apart', async (_case, lookup) => {
    const attempt = await transportWith(lookup as WebhookTransportOptions['lookup']).send(`https://hooks.test/`, {}, '{}');
    expect(attempt).toMatchObject({ error: 'refused address', reason: expect.any(String) });
  });
});

describe('lookups at once (PLINTH_OUTBOUND_LOOKUPS)', () => {
  // Each unanswered lookup holds a thread of libuv's pool, which file reads, compression and
  // password hashes share: names whose DNS never answers must not take them all.
  it('waits for a lookup past the bound of the process until the deadline: a silent name holds one, the attempt is late and retried', async () => {
    const shared = new SharedArrayBuffer(4);
    // Two threads of one process, each with its own transport, one bound between them.
    const options = { allowLoopback: true, timeoutMs: TIMEOUT_MS, maxResponseBytes: 1024, lookupsAtOnce: 1, lookupSlots: shared };
    const silent = createWebhookTransport({ ...options, lookup: never });
    let asked = 0;
    const other = createWebhookTransport({
      ...options,
      lookup: async () => {
        asked++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    expect(await silent.send(`http://silent.test:${port}/`, {}, '{}')).toEqual({ error: 'timeout' });
    const { value, ms } = await timed(other.send(`http://hooks.test:${port}/`, {}, '{}'));
    expect(value).toEqual({ error: 'timeout' });
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(asked).toBe(0);
  });

  it('sends attempts that come at once past the bound, each in its turn', async () => {
    const answering = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
    const to = (answering.address() as AddressInfo).port;
    const transport = createWebhookTransport({
      allowLoopback: true,
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: 1024,
      lookupsAtOnce: 1,
      lookupSlots: new SharedArrayBuffer(4),
      lookup: () => after(20, [{ address: '127.0.0.1', family: 4 }]),
    });
    const attempts = await Promise.all(Array.from({ length: 4 }, () => transport.send(`http://hooks.test:${to}/`, {}, '{}')));
    answering.closeAllConnections();
    await new Promise((resolve) => answering.close(resolve));
    expect(attempts).toEqual(Array.from({ length: 4 }, () => ({ status: 204 })));
  });
});
