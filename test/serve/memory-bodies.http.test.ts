import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';

// Files under the stream threshold are cached whole and sent from that buffer; past 64 KB with
// backpressure (tryEnd + onWritable) instead of letting uWS copy what the socket cannot take.
// Bodies up to 1 MB go out in one send as far as the socket takes it; larger ones 64 KB a turn.
const big = randomBytes(12 * 1024 * 1024 + 77);
const medium = randomBytes(300 * 1024 + 5);
let port: number;

const get = (path: string, headers: Record<string, string> = {}) => request({ port, host: 'mem-site.sites.localhost', path, headers });

/** GETs a path but reads nothing for `pauseMs`, so the server meets a full socket first. */
function slowGet(path: string, pauseMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'mem-site.sites.localhost' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.pause();
      setTimeout(() => res.resume(), pauseMs);
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const server = useTestServer();

beforeAll(async () => {
  port = server.port;
  await publishSite(server.store, 'mem-site', { 'index.html': '<p>home</p>', 'big.bin': big, 'medium.bin': medium });
});

describe('large bodies from memory', () => {
  it('sends a cached 12 MB file whole, again from the cache', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get('/big.bin');
      expect(res.status).toBe(200);
      expect(res.headers['content-length']).toBe(String(big.length));
      expect(res.body.equals(big)).toBe(true);
    }
  });

  it('finishes for readers that stall first, several at once', async () => {
    const bodies = await Promise.all([slowGet('/big.bin', 300), slowGet('/big.bin', 150), slowGet('/big.bin', 0)]);
    for (const body of bodies) expect(body.equals(big)).toBe(true);
  });

  it('sends a body under the slicing size whole, also to readers that stall first', async () => {
    const res = await get('/medium.bin');
    expect(res.body.equals(medium)).toBe(true);
    const bodies = await Promise.all([slowGet('/medium.bin', 200), slowGet('/medium.bin', 0), slowGet('/big.bin', 100)]);
    expect(bodies[0]!.equals(medium) && bodies[1]!.equals(medium)).toBe(true);
    expect(bodies[2]!.equals(big)).toBe(true);
  });

  it('sends a large range of a cached file with backpressure', async () => {
    const res = await get('/big.bin', { range: 'bytes=100000-9999999' });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 100000-9999999/${big.length}`);
    expect(res.body.equals(big.subarray(100_000, 10_000_000))).toBe(true);
  });

  it('survives clients that leave mid-body and keeps serving', async () => {
    await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<void>((resolve) => {
            const req = httpRequest({ host: '127.0.0.1', port, path: '/big.bin', headers: { host: 'mem-site.sites.localhost' }, agent: false }, (res) => {
              res.once('data', () => {
                req.destroy();
                resolve();
              });
            });
            req.on('error', () => resolve());
            req.end();
          }),
      ),
    );
    const after = await get('/big.bin');
    expect(after.body.equals(big)).toBe(true);
    expect((await get('/')).status).toBe(200);
  });
});
