import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';

/** The stylesheet and script every page loads go out compressed on the docs host and the app host. */

const server = useTestServer();

describe('page assets over HTTP', () => {
  it.each([
    ['localhost', '/'],
    ['app.localhost', '/login'],
  ])('%s sends the assets its pages link compressed, as the browser asks', async (host, page) => {
    const html = (await request({ port: server.port, host, path: page })).text;
    const linked = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+\.(?:css|js))"/g)].map((match) => match[1]!);
    expect(linked.length).toBeGreaterThanOrEqual(2);
    for (const path of linked) {
      const plain = await request({ port: server.port, host, path });
      const compressed = await request({ port: server.port, host, path, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(compressed.status, path).toBe(200);
      expect(compressed.headers['content-encoding'], path).toBe('br');
      expect(compressed.headers.vary, path).toBe('Accept-Encoding');
      expect(brotliDecompressSync(compressed.body).equals(plain.body), path).toBe(true);
    }
  });
});
