import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../../packages/cli/src/api-client.js';
import { deployCommand } from '../../packages/cli/src/deploy.js';
import { UPLOAD_FILE } from '../../packages/cli/src/upload-parts.js';
import { writeTree } from '../fixtures/archives.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** `plinth deploy` of a folder larger than one request: parts, in parallel, resumed after a failure. */

let owner: TestAccount;
const PART = 256 * 1024;

const server = useTestServer();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const apiUrl = (port = server.port) => `http://api.localhost:${port}`;
const siteCount = (): number => server.store.listSiteIds().length;

function bigFolder(files = 24): { dir: string; contents: Record<string, Buffer> } {
  const dir = tempDir('plinth-parts-');
  const contents: Record<string, Buffer> = { 'index.html': Buffer.from('<h1>large</h1>') };
  for (let i = 0; i < files; i++) contents[`media/photo-${i}.jpg`] = randomBytes(100_000 + i);
  for (let i = 0; i < 8; i++) contents[`pages/page-${i}.html`] = Buffer.from(`<p>${'text '.repeat(20_000)} ${i}</p>`);
  writeTree(dir, contents);
  return { dir, contents };
}

async function expectServed(name: string, contents: Record<string, Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(contents)) {
    const res = await request({ port: server.port, host: `${name}.sites.localhost`, path: `/${path}`, headers: { 'accept-encoding': 'identity' } });
    expect(res.status, path).toBe(200);
    expect(res.body.equals(content), path).toBe(true);
  }
}

describe('plinth deploy of a folder larger than one request', () => {
  it('uploads it in parts, several at once, with one progress bar, and publishes one revision', async () => {
    const { dir, contents } = bigFolder();
    const status: Array<string | undefined> = [];
    const lines: string[] = [];
    const before = siteCount();
    expect(
      await deployCommand({ dir, apiUrl: apiUrl(), token: owner.token, out: (line) => lines.push(line), status: (line) => status.push(line), partBytes: PART }),
    ).toBe(0);
    expect(lines[0]).toMatch(/^Published revision 1: /);
    expect(siteCount()).toBe(before + 1);
    const uploading = status.filter((line) => line?.startsWith('Uploading ['));
    expect(uploading.at(-1) ?? '').toMatch(/files in \d+ parts\)$/);
    const parts = Number(/in (\d+) parts/.exec(uploading.at(-1)!)![1]);
    expect(parts).toBeGreaterThan(5);
    // One bar for the whole deploy, moving forward only.
    const shares = uploading.map((line) => Number(/(\d+)%/.exec(line!)![1]));
    expect(shares).toEqual([...shares].sort((a, b) => a - b));
    expect(existsSync(join(dir, UPLOAD_FILE))).toBe(false);

    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string };
    expect(server.store.listRevisions(server.store.getSite(state.site)!.id).revisions).toHaveLength(1);
    await expectServed(state.site, contents);

    // A redeploy of a few changed files of a large folder sends only those.
    writeTree(dir, { 'pages/page-3.html': '<p>changed</p>' });
    const again: Array<string | undefined> = [];
    expect(await deployCommand({ dir, apiUrl: apiUrl(), token: owner.token, out: () => undefined, status: (line) => again.push(line), partBytes: PART })).toBe(
      0,
    );
    expect(again).toContain(`1 of ${Object.keys(contents).length} files changed (14 B)`);

    // --full sends the whole folder as one archive, as it says, however large the folder.
    const full: Array<string | undefined> = [];
    expect(
      await deployCommand({ dir, apiUrl: apiUrl(), token: owner.token, full: true, out: () => undefined, status: (line) => full.push(line), partBytes: PART }),
    ).toBe(0);
    expect(full.some((line) => line?.startsWith(`Packed ${Object.keys(contents).length} files`))).toBe(true);
    expect(full.some((line) => line?.includes(' parts)'))).toBe(false);
  });

  it('a secret in a late part refuses the whole deploy: exit 1, nothing published', async () => {
    const { dir } = bigFolder(12);
    writeTree(dir, { 'zz/late.js': 'const key = "AKIAIOSFODNN7EXAMPLF";\nconst secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";\n' });
    const before = siteCount();
    const errors: string[] = [];
    const code = await deployCommand({
      dir,
      apiUrl: apiUrl(),
      token: owner.token,
      out: () => undefined,
      err: (line) => errors.push(line),
      partBytes: PART,
      parallel: 1,
    });
    expect(code).toBe(1);
    expect(errors.join('\n')).toContain('422 blocked_secret');
    expect(errors.join('\n')).toContain('zz/late.js');
    expect(siteCount()).toBe(before);
    expect(existsSync(join(dir, UPLOAD_FILE))).toBe(false);
  });

  it('resumes after a run that lost its connection half-way, sending only what had not arrived', async () => {
    const { dir, contents } = bigFolder();
    const proxy = await cuttingProxy(server.port);
    try {
      // The connection breaks after about 1.5 MB have gone through.
      proxy.cutAfter(1_500_000);
      const before = siteCount();
      await expect(deployCommand({ dir, apiUrl: apiUrl(proxy.port), token: owner.token, out: () => undefined, partBytes: PART, parallel: 2 })).rejects.toThrow(
        /Run the same deploy again to resume/,
      );
      expect(siteCount()).toBe(before);
      const saved = JSON.parse(readFileSync(join(dir, UPLOAD_FILE), 'utf8')) as { manifest: string };
      const arrived = server.store.listManifestParts(saved.manifest);
      expect(arrived.size).toBeGreaterThan(0);
      let arrivedBytes = 0;
      for (const part of arrived.values()) arrivedBytes += part.size;
      const total = Object.values(contents).reduce((sum, content) => sum + content.byteLength, 0);

      proxy.cutAfter(Number.POSITIVE_INFINITY);
      proxy.resetCount();
      const errors: string[] = [];
      const lines: string[] = [];
      expect(
        await deployCommand({
          dir,
          apiUrl: apiUrl(proxy.port),
          token: owner.token,
          out: (line) => lines.push(line),
          err: (line) => errors.push(line),
          partBytes: PART,
        }),
      ).toBe(0);
      expect(errors.join('\n')).toMatch(/^Resuming the upload of mf_/);
      expect(lines.at(-2) ?? lines[0]).toMatch(/Published revision 1/);
      // Only the contents that had not arrived went through again (plus headers and packing).
      expect(proxy.upstreamBytes()).toBeLessThan(total - arrivedBytes + 200_000);
      const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string };
      expect(server.store.listRevisions(server.store.getSite(state.site)!.id).revisions).toHaveLength(1);
      await expectServed(state.site, contents);
      expect(existsSync(join(dir, UPLOAD_FILE))).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});

describe('plinth deploy in parts without a token', () => {
  it('keeps the manifest’s secret with its id, sends it with every request, and resumes with it', async () => {
    // Within an anonymous site's limits, but larger than one part.
    const dir = tempDir('plinth-parts-anon-');
    const contents: Record<string, Buffer> = { 'index.html': Buffer.from('<h1>anonymous, in parts</h1>') };
    for (let i = 0; i < 6; i++) contents[`media/photo-${i}.jpg`] = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), randomBytes(120_000 + i)]);
    writeTree(dir, contents);
    // Left readable by all by an earlier run (or a copy): the secret must not be written into it as it is.
    writeFileSync(join(dir, UPLOAD_FILE), '{"manifest":"mf_stale","fingerprint":"another folder"}\n', { mode: 0o644 });
    chmodSync(join(dir, UPLOAD_FILE), 0o644);
    const proxy = await cuttingProxy(server.port);
    try {
      proxy.cutAfter(300_000);
      const before = siteCount();
      await expect(deployCommand({ dir, apiUrl: apiUrl(proxy.port), out: () => undefined, partBytes: PART, parallel: 1 })).rejects.toThrow(
        /Run the same deploy again to resume/,
      );
      expect(siteCount()).toBe(before);
      const saved = JSON.parse(readFileSync(join(dir, UPLOAD_FILE), 'utf8')) as { manifest: string; secret: string };
      expect(saved.secret).toMatch(/^ms_/);
      expect(statSync(join(dir, UPLOAD_FILE)).mode & 0o077).toBe(0);
      expect(server.store.listManifestParts(saved.manifest).size).toBeGreaterThan(0);
      // The id alone opens nothing.
      expect((await callApi({ apiUrl: apiUrl(), method: 'GET', path: `v1/deploy/manifest/${saved.manifest}` })).status).toBe(404);

      proxy.cutAfter(Number.POSITIVE_INFINITY);
      const errors: string[] = [];
      const lines: string[] = [];
      expect(await deployCommand({ dir, apiUrl: apiUrl(proxy.port), out: (line) => lines.push(line), err: (line) => errors.push(line), partBytes: PART })).toBe(
        0,
      );
      expect(errors.join('\n')).toMatch(/^Resuming the upload of mf_/);
      expect(lines[0]).toMatch(/^Published revision 1: /);
      const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; site_token: string };
      expect(state.site_token).toMatch(/^st_/);
      // The page carries the anonymous badge; every other file is served as sent.
      const { 'index.html': _page, ...media } = contents;
      await expectServed(state.site, media);
      expect(existsSync(join(dir, UPLOAD_FILE))).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});

describe('a refused upload reaches the CLI as the server’s answer', () => {
  it('413 from the real server for a body over 90 MB, never "write EPIPE"', async () => {
    const answer = await callApi({
      apiUrl: apiUrl(),
      method: 'POST',
      path: 'v1/deploy',
      body: Buffer.alloc(95 * 1024 * 1024, 1),
      headers: { 'Content-Type': 'application/gzip' },
    });
    expect(answer.status).toBe(413);
    expect(answer.json?.error?.code).toBe('too_large');
  });

  it('413 from a server that answers and resets the connection while the body is still going out', async () => {
    const refusal = JSON.stringify({ error: { code: 'too_large', message: 'One request can carry at most 90 MB.' } });
    const harsh = createServer((socket) => {
      let answered = false;
      socket.on('data', () => {
        if (answered) {
          // Still sending: reset, which drops whatever the client had not read yet.
          socket.resetAndDestroy();
          return;
        }
        answered = true;
        socket.write(
          `HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(refusal)}\r\nConnection: close\r\n\r\n${refusal}`,
        );
        socket.end();
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => harsh.listen(0, '127.0.0.1', resolve));
    try {
      const port = (harsh.address() as { port: number }).port;
      for (let i = 0; i < 3; i++) {
        const answer = await callApi({ apiUrl: apiUrl(port), method: 'POST', path: 'v1/deploy', body: Buffer.alloc(20 * 1024 * 1024, 2) });
        expect(answer.status).toBe(413);
        expect(answer.json?.error?.message).toContain('90 MB');
      }
    } finally {
      await new Promise((resolve) => harsh.close(resolve));
    }
  });
});

/** A TCP proxy to the server that can cut every connection once a number of bytes went upstream. */
async function cuttingProxy(target: number): Promise<{
  port: number;
  cutAfter(bytes: number): void;
  resetCount(): void;
  upstreamBytes(): number;
  close(): Promise<void>;
}> {
  let limit = Number.POSITIVE_INFINITY;
  let forwarded = 0;
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.byteLength;
      if (forwarded > limit) return cut();
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as { port: number }).port,
    cutAfter: (bytes) => {
      limit = bytes;
    },
    resetCount: () => {
      forwarded = 0;
    },
    upstreamBytes: () => forwarded,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
