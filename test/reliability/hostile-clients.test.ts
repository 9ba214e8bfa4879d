import { readdirSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { deployTo } from '../helpers/deploy-client.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { waitUntil } from '../helpers/wait.js';
import { openFds, rssBytes } from '../helpers/proc-stats.js';
import { startTestServer } from '../helpers/server.js';
import { publishSite, tempDir } from '../helpers/sites.js';
import { recordFigures } from './figures.js';

// Clients that try to hold the server's memory, connections or workers hostage. The server runs
// as its own process so its memory and descriptors can be read from /proc.
const BIG_FILE_BYTES = 32 * 1024 * 1024;
const UPLOAD_TIMEOUT_S = 3;
const figures: Record<string, unknown> = {};

let main: MainProcess;
let dataDir: string;
let baselineFds: number;

beforeAll(async () => {
  dataDir = tempDir('plinth-hostile-');
  const store = openStore({ dir: dataDir });
  await publishSite(store, 'big-file', { 'index.html': '<h1>hi</h1>', 'big.bin': Buffer.alloc(BIG_FILE_BYTES, 7) });
  await store.close();
  main = await startMain(mainEnv(dataDir, { PLINTH_UPLOAD_TIMEOUT_S: String(UPLOAD_TIMEOUT_S) }));
  // The baseline once start-up has settled: two readings in a row agree.
  let last = -1;
  await waitUntil(
    () => {
      const now = openFds(main.child.pid!);
      const settled = now === last;
      last = now;
      return settled;
    },
    5000,
    100,
  );
  baselineFds = openFds(main.child.pid!);
});

afterAll(async () => {
  await killMain(main);
  rmSync(dataDir, { recursive: true, force: true });
  recordFigures('hostile-clients', figures);
});

const pid = (): number => main.child.pid!;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Opens a connection, writes `first`, then `piece` every `everyMs`; resolves with how long the
 * server took to close it and what it answered.
 */
function trickle(first: string, piece: string, everyMs: number): Promise<{ closedAfterMs: number; answer: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    const socket = connect(main.port, '127.0.0.1', () => socket.write(first));
    const timer = piece === '' ? undefined : setInterval(() => !socket.destroyed && socket.write(piece), everyMs);
    socket.on('data', (data: Buffer) => {
      // A client that is being answered stops sending. One that kept writing would meet the reset
      // of the closed connection with the answer possibly still unread, and lose it.
      clearInterval(timer);
      answer += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - started, answer });
    });
    // Never wait for ever: a server that keeps it open past a minute fails the test below.
    setTimeout(() => socket.destroy(), 60_000);
  });
}

describe('slow and hostile clients', () => {
  it.concurrent(
    'cuts off slowloris headers, trickled bodies and silent connections within seconds',
    async () => {
      const kinds = {
        headers: () => trickle('GET / HTTP/1.1\r\nHost: big-file.sites.localhost\r\nX-Slow: ', 'a', 500),
        deployBody: () => trickle('POST /v1/deploy HTTP/1.1\r\nHost: api.localhost\r\nContent-Length: 1000000\r\n\r\n', 'x'.repeat(100), 500),
        apiBody: () =>
          trickle(
            'POST /v1/sites/big-file/rollback HTTP/1.1\r\nHost: api.localhost\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{',
            ' ',
            500,
          ),
        silent: () => trickle('', '', 0),
      };
      const results: Record<string, unknown> = {};
      await Promise.all(
        Object.entries(kinds).map(async ([kind, open]) => {
          const closes = await Promise.all(Array.from({ length: 20 }, open));
          const times = closes.map((c) => c.closedAfterMs);
          results[kind] = { connections: 20, medianClosedAfterMs: median(times), maxClosedAfterMs: Math.max(...times) };
          // uWS closes a connection whose headers, or body at under 16 KB/s, take over 10 s (checked every 4 s).
          expect(Math.max(...times), kind).toBeLessThan(20_000);
          // Nothing is routed or answered for these, except that a trickled body (a deploy's or
          // any other) may meet PLINTH_UPLOAD_TIMEOUT_S first and get its 400.
          for (const close of closes) {
            if (kind.endsWith('Body') && close.answer !== '') expect(close.answer).toMatch(/^HTTP\/1\.1 400 /);
            else expect(close.answer, kind).toBe('');
          }
        }),
      );
      figures.slowloris = results;
    },
    40_000,
  );

  it.concurrent(
    'stops an upload trickled just above that floor after PLINTH_UPLOAD_TIMEOUT_S, and publishes nothing',
    async () => {
      const started = Date.now();
      // 32 KB/s: fast enough for uWS's own rule, far too slow for a 10 MB body.
      const result = await trickle(
        'POST /v1/deploy HTTP/1.1\r\nHost: api.localhost\r\nContent-Type: application/gzip\r\nContent-Length: 10000000\r\n\r\n',
        'y'.repeat(3200),
        100,
      );
      const [head, body] = result.answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      const json = JSON.parse(body!);
      expect(json.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining(`${UPLOAD_TIMEOUT_S} seconds`) });
      expect(json.agent_message).toContain('Nothing was changed');
      expect(result.closedAfterMs).toBeGreaterThanOrEqual(UPLOAD_TIMEOUT_S * 1000 - 100);
      expect(readdirSync(join(dataDir, 'tmp', 'uploads'))).toEqual([]);
      const store = openStore({ dir: dataDir });
      try {
        expect(store.listSiteIds()).toHaveLength(1);
      } finally {
        await store.close();
      }
      figures.trickledUpload = { bytesPerSecond: 32_000, answeredAfterMs: Date.now() - started, status: 400 };
    },
    30_000,
  );

  it.concurrent(
    'holds 10,000 idle keep-alive connections in bounded memory and closes them when idle',
    async () => {
      const before = rssBytes(pid());
      const sockets: Socket[] = [];
      let answered = 0;
      let closed = 0;
      const started = Date.now();
      for (let i = 0; i < 10_000; i++) {
        await new Promise<void>((resolve, reject) => {
          const socket = connect(main.port, '127.0.0.1', () => {
            socket.write('GET / HTTP/1.1\r\nHost: big-file.sites.localhost\r\n\r\n');
            resolve();
          });
          socket.once('data', () => answered++);
          socket.on('close', () => closed++);
          socket.on('error', reject);
          sockets.push(socket);
        });
      }
      await waitUntil(() => answered === 10_000, 10_000, 20);
      const openedMs = Date.now() - started;
      const held = rssBytes(pid());
      const fdsHeld = openFds(pid()) - baselineFds;
      const perConnection = Math.round((held - before) / 10_000);
      expect(answered).toBe(10_000);
      expect(fdsHeld).toBeGreaterThanOrEqual(9_900);
      // Measured about 0.8 KB; 16 KB is a generous bound that still rules out per-connection buffers.
      expect(perConnection).toBeLessThan(16 * 1024);

      const idleStarted = Date.now();
      const allClosed = await waitUntil(() => closed === 10_000, 40_000, 200);
      figures.idleKeepAlive = {
        connections: 10_000,
        openMs: openedMs,
        rssBeforeBytes: before,
        rssHeldBytes: held,
        bytesPerConnection: perConnection,
        closedByServerAfterMs: Date.now() - idleStarted,
      };
      expect(allClosed).toBe(true);
      for (const socket of sockets) socket.destroy();
    },
    90_000,
  );

  it('does not buffer a large file for clients that never read it, and drops them', async () => {
    // After the 10,000 connections have gone, so their memory does not blur this figure.
    await waitUntil(() => openFds(pid()) <= baselineFds + 2, 40_000, 200);
    const before = rssBytes(pid());
    const fdsBefore = openFds(pid());
    const clients: Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const socket = connect(main.port, '127.0.0.1', () => socket.write('GET /big.bin HTTP/1.1\r\nHost: big-file.sites.localhost\r\n\r\n'));
      socket.pause();
      socket.on('error', () => undefined);
      clients.push(socket);
    }
    let peak = before;
    const started = Date.now();
    while (Date.now() - started < 4000) {
      peak = Math.max(peak, rssBytes(pid()));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const perClient = Math.round((peak - before) / 20);
    // Streaming reads the file in 256 KB pieces and stops at backpressure; whole copies would be 32 MB each.
    expect(perClient).toBeLessThan(BIG_FILE_BYTES / 8);
    const dropped = await waitUntil(() => openFds(pid()) <= fdsBefore, 40_000, 200);
    figures.nonReadingClients = {
      clients: 20,
      fileBytes: BIG_FILE_BYTES,
      rssBeforeBytes: before,
      rssPeakBytes: peak,
      bytesPerClient: perClient,
      droppedByServerAfterMs: Date.now() - started,
    };
    expect(dropped).toBe(true);
    for (const socket of clients) socket.destroy();
  }, 90_000);
});

describe('a flood of anonymous deploys over the cap', () => {
  it('is answered 429 before any of it reaches the ingest pool', async () => {
    const server = await startTestServer({ PLINTH_ANON_DEPLOYS_PER_HOUR: '5', PLINTH_ANON_SITES_PER_HOUR: '5' });
    try {
      const archive = tgzBytes([['index.html', '<h1>flood</h1>']]);
      const statuses = new Map<number, number>();
      let retryAfterMissing = 0;
      const total = 1000;
      let next = 0;
      const started = performance.now();
      const sender = async (): Promise<void> => {
        while (next < total) {
          next++;
          const answer = await deployTo(server.port, { body: archive });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status === 429 && !answer.headers['retry-after']) retryAfterMissing++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, sender));
      const seconds = (performance.now() - started) / 1000;
      expect(Object.fromEntries(statuses)).toEqual({ 201: 5, 429: 995 });
      expect(retryAfterMissing).toBe(0);
      expect(server.stats().ingestTasks).toBe(5);
      expect(readdirSync(join(server.dataDir, 'tmp', 'uploads'))).toEqual([]);
      figures.anonymousFlood = {
        requests: total,
        published: 5,
        refused429: 995,
        ingestTasks: server.stats().ingestTasks,
        seconds: Math.round(seconds * 10) / 10,
        refusalsPerSecond: Math.round(995 / seconds),
      };
    } finally {
      await server.close();
    }
  }, 60_000);
});
