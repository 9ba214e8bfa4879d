import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const page = (n: number): string => `<!doctype html><title>Page ${n}</title>\n${'<p>text that compresses well</p>\n'.repeat(400)}`;

describe('a stopping server and the work a deploy leaves running', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close({ graceMs: 0 });
    server = undefined;
  });

  it('finishes compressing a just-published deploy before it closes the store', async () => {
    server = await startTestServer();
    const files = Array.from({ length: 30 }, (_, n) => [n === 0 ? 'index.html' : `page-${n}.html`, page(n)] as const);
    const res = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
    expect(res.status).toBe(201);
    const revisionId = res.json.revision.id as string;
    const { dataDir } = server;
    // Stop at once: compression of the 30 pages is still under way.
    expect(await server.close({ graceMs: 30_000 })).toBe(true);
    server = undefined;

    const store = openStore({ dir: dataDir });
    try {
      for (const [path] of files) expect(store.getFile(revisionId, path)?.encodings?.br, path).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('stops without waiting for it when the grace is cut short, and nothing writes to the closed store', async () => {
    server = await startTestServer();
    const files = Array.from({ length: 30 }, (_, n) => [n === 0 ? 'index.html' : `page-${n}.html`, page(n)] as const);
    const res = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
    expect(res.status).toBe(201);
    const unhandled: unknown[] = [];
    const note = (err: unknown): void => void unhandled.push(err);
    process.on('unhandledRejection', note);
    try {
      await server.close({ graceMs: 0 });
      server = undefined;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
