import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, type ApiResponse } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { waitUntil } from '../helpers/wait.js';
import { rssBytes } from '../helpers/proc-stats.js';
import { tempDir } from '../helpers/sites.js';
import { recordFigures } from './figures.js';

/**
 * A 300 MB site (incompressible content, many files) through `plinth deploy` with the server's
 * default limits: one revision, nothing live before it, the site byte-identical; the same upload
 * killed half-way (SIGKILL of the client) and run again sends only what had not arrived.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));
const MB = 1024 * 1024;
const SITE_BYTES = 300 * MB;
const FILES = 600;

let main: MainProcess | undefined;
let work: string;
let token: string;
let proxy: CountingProxy;

beforeAll(async () => {
  work = tempDir('plinth-large-');
  const dataDir = join(work, 'data');
  main = await startMain(mainEnv(dataDir, { PLINTH_LOG_LEVEL: 'error' }));
  const admin = (...args: string[]): string =>
    execFileSync(process.execPath, [CLI, 'admin', ...args], { env: { ...process.env, PLINTH_DATA_DIR: dataDir }, encoding: 'utf8' }).trim();
  admin('account', 'create', '--email', 'large@example.com', '--plan', 'builder');
  token = admin('token', 'create', '--email', 'large@example.com');
  proxy = await countingProxy(main.port);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await killMain(main);
  // 300 MB of random bytes per folder, and the server's copy of them.
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Random (incompressible) files as a media-heavy site has them, plus pages. */
function makeSite(dir: string, seed: string): Map<string, string> {
  const hashes = new Map<string, string>();
  const put = (path: string, content: Buffer): void => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
    hashes.set(path, createHash('sha256').update(content).digest('hex'));
  };
  put('index.html', Buffer.from(`<h1>large site ${seed}</h1>`));
  const each = Math.floor(SITE_BYTES / FILES);
  const kinds = ['jpg', 'png', 'webp', 'mp4'];
  for (let i = 0; i < FILES; i++) put(`media/${i % 10}/file-${i}.${kinds[i % kinds.length]}`, randomBytes(each + (i % 97)));
  return hashes;
}

const api = (path: string): Promise<ApiResponse> => callApi(main!.port, { path, token });

function deploy(dir: string): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; peakRss: number }>;
} {
  const child = spawn(process.execPath, [CLIENT, 'deploy', dir, '--api', `http://api.localhost:${proxy.port}`, '--token', token], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let peakRss = 0;
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssBytes(child.pid!));
    } catch {
      // ended
    }
  }, 100);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; peakRss: number }>((resolve) =>
    child.on('exit', (code, signal) => {
      clearInterval(sampler);
      resolve({ code, signal, stdout, stderr, peakRss });
    }),
  );
  return { child, done };
}

async function expectPublishedOnce(name: string, hashes: Map<string, string>): Promise<void> {
  const revisions = await api(`/v1/sites/${name}/revisions`);
  expect(revisions.json.revisions).toHaveLength(1);
  const listed = await api(`/v1/sites/${name}/files`);
  expect(new Map(listed.json.files.map((file: { path: string; sha256: string }) => [file.path, file.sha256]))).toEqual(hashes);
  // Byte for byte, as served.
  for (const path of hashes.keys()) {
    const served = await callApi(main!.port, { path: `/v1/sites/${name}/files/${path}`, token });
    expect(served.status, path).toBe(200);
    expect(createHash('sha256').update(served.body).digest('hex'), path).toBe(hashes.get(path));
  }
}

describe('a 300 MB site through plinth deploy', () => {
  it('publishes it as one revision, byte for byte, with bounded memory', async () => {
    const dir = join(work, 'site-a');
    const hashes = makeSite(dir, 'a');
    proxy.reset();
    const started = performance.now();
    const run = deploy(dir);
    // Nothing is live while the parts arrive: whatever revision is ever seen live is the final one.
    const seenLive = new Set<string>();
    const watching = setInterval(() => {
      void api('/v1/sites').then((res) => {
        for (const site of res.json?.sites ?? []) if (site.live_revision) seenLive.add(site.live_revision.id);
      });
    }, 250);
    const result = await run.done;
    clearInterval(watching);
    const seconds = (performance.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Published revision 1: /);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string };
    expect([...seenLive].every((id) => id === state.revision)).toBe(true);
    await expectPublishedOnce(state.site, hashes);
    // The client holds a few parts at a time, never the site.
    expect(result.peakRss).toBeLessThan(400 * MB);
    recordFigures('large-deploy', {
      siteBytes: SITE_BYTES,
      files: FILES + 1,
      seconds: Number(seconds.toFixed(1)),
      mbPerSecond: Number((SITE_BYTES / MB / seconds).toFixed(1)),
      sentBytes: proxy.upstream(),
      clientPeakRssMb: Math.round(result.peakRss / MB),
      serverRssMb: Math.round(rssBytes(main!.child.pid!) / MB),
    });
    rmSync(dir, { recursive: true, force: true });
  }, 600_000);

  it('killed half-way (SIGKILL) and run again, sends only what had not arrived', async () => {
    const dir = join(work, 'site-b');
    const hashes = makeSite(dir, 'b');
    proxy.reset();
    const sitesBefore = (await api('/v1/sites')).json.sites.length as number;
    const first = deploy(dir);
    const uploadFile = join(dir, '.plinth-upload.json');
    expect(await waitUntil(() => existsSync(uploadFile), 120_000)).toBe(true);
    const manifest = (JSON.parse(readFileSync(uploadFile, 'utf8')) as { manifest: string }).manifest;
    // Kill once about 40% has arrived.
    const arrivedEnough = await waitUntil(async () => (await api(`/v1/deploy/manifest/${manifest}`)).json?.received_bytes > 0.4 * SITE_BYTES, 300_000, 50);
    expect(arrivedEnough).toBe(true);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    expect((await api('/v1/sites')).json.sites).toHaveLength(sitesBefore);

    // Parts in flight at the kill may still land: wait until the server is done with them.
    let before = await api(`/v1/deploy/manifest/${manifest}`);
    await waitUntil(
      async () => {
        const now = await api(`/v1/deploy/manifest/${manifest}`);
        const settled = now.json.received_bytes === before.json.received_bytes;
        before = now;
        return settled;
      },
      30_000,
      1000,
    );
    const missingBytes = before.json.missing_bytes as number;
    expect(missingBytes).toBeGreaterThan(0);
    // Over 40 % had arrived at the kill; the parts in flight then are lost and sent again.
    expect(missingBytes).toBeLessThan(0.75 * SITE_BYTES);

    proxy.reset();
    const started = performance.now();
    const second = await deploy(dir).done;
    const seconds = (performance.now() - started) / 1000;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`Resuming the upload of ${manifest}`);
    // A part whose body had fully arrived before the kill may still have been landing when the
    // run resumed: the manifest's answer at the resume is what counts, at most what was seen here.
    const resumed = /already there, sending the other ([\d.]+) (KB|MB|GB)/.exec(second.stderr);
    expect(resumed, second.stderr).not.toBeNull();
    const resent = Number(resumed![1]) * { KB: 1024, MB, GB: 1024 * MB }[resumed![2] as 'KB' | 'MB' | 'GB'];
    expect(resent).toBeGreaterThan(0);
    expect(resent).toBeLessThanOrEqual(missingBytes + 0.05 * MB);
    // Only the missing contents went over the wire again (plus tar headers and HTTP).
    expect(proxy.upstream()).toBeGreaterThanOrEqual(resent - 0.05 * MB);
    expect(proxy.upstream()).toBeLessThan(resent + 2 * MB);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string };
    await expectPublishedOnce(state.site, hashes);
    expect(existsSync(uploadFile)).toBe(false);
    recordFigures('large-deploy-resume', {
      siteBytes: SITE_BYTES,
      missingAtKill: missingBytes,
      resentBytes: proxy.upstream(),
      resumeSeconds: Number(seconds.toFixed(1)),
    });
    rmSync(dir, { recursive: true, force: true });
  }, 900_000);
});

interface CountingProxy {
  port: number;
  reset(): void;
  /** Bytes clients sent through it since the last reset. */
  upstream(): number;
  close(): Promise<void>;
}

/** A TCP proxy in front of the server that counts what clients send. */
async function countingProxy(target: number): Promise<CountingProxy> {
  let forwarded = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.byteLength;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.pipe(client);
    client.on('end', () => upstream.end());
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    reset: () => {
      forwarded = 0;
    },
    upstream: () => forwarded,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
