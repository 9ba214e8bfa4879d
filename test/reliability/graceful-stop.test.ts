import { readdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { accountSite, accountWithToken } from '../api/api-helpers.js';
import { request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { tempDir } from '../helpers/sites.js';
import { slowUpload, splitBody } from '../helpers/slow-client.js';

// SIGTERM: stop accepting, let what is in flight finish within PLINTH_STOP_GRACE_S, exit 0; a
// deploy the bound cuts off is not published.
const GRACE_S = 3;

interface Fixture {
  dataDir: string;
  token: string;
  site: string;
  revision: string;
}

async function fixture(): Promise<Fixture> {
  const dataDir = tempDir('plinth-stop-');
  const store = openStore({ dir: dataDir });
  const owner = await accountWithToken(store, 'builder');
  const site = await accountSite(store, owner, [], { files: { 'index.html': '<h1>before</h1>' } });
  await store.close();
  return { dataDir, token: owner.token, site: site.name, revision: site.revision };
}

function updateBody(f: Fixture, html: string): Buffer {
  return Buffer.from(JSON.stringify({ site: f.site, base_revision: f.revision, files: [{ path: 'index.html', content: html }] }));
}

function startUpdate(main: MainProcess, f: Fixture, body: Buffer, agent?: Agent) {
  return slowUpload({
    port: main.port,
    host: 'api.localhost',
    path: '/v1/deploy',
    headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/json' },
    contentLength: body.byteLength,
    agent,
  });
}

// Bodies are spooled, not received into memory, so that a spool file shows the upload arrived.
const SPOOLING = { PLINTH_MEMORY_BODY_MB: '0' };

let main: MainProcess | undefined;
afterEach(() => killMain(main));

/** The server has the upload in hand: its spool file exists. */
async function untilSpooling(f: Fixture): Promise<void> {
  expect(await waitUntil(() => readdirSync(join(f.dataDir, 'tmp', 'uploads')).length > 0, 5000, 20)).toBe(true);
}

/** The server has taken the signal and is stopping. */
async function untilStopping(process: MainProcess): Promise<void> {
  expect(await waitUntil(() => process.output().includes('server.stopping'), 5000, 20)).toBe(true);
}

describe('graceful stop (SIGTERM)', () => {
  beforeAll(() => undefined);

  it('handles a SIGTERM sent the moment the banner appears', async () => {
    // Tools start using (and stopping) the server at the banner, so the handler must already be in place.
    for (let i = 0; i < 3; i++) {
      main = await startMain(mainEnv(tempDir('plinth-stop-at-banner-')));
      main.child.kill('SIGTERM');
      expect(await main.exited).toEqual({ code: 0, signal: null });
    }
  });

  it('lets a deploy that is uploading finish and publish, then exits 0', async () => {
    const f = await fixture();
    main = await startMain(mainEnv(f.dataDir, { ...SPOOLING, PLINTH_STOP_GRACE_S: String(GRACE_S), PLINTH_LOG_LEVEL: 'info' }));
    const body = updateBody(f, '<h1>finished during the stop</h1>');
    const [first, rest] = splitBody(body, 20);
    const upload = startUpdate(main, f, body);
    upload.write(first);
    await untilSpooling(f);
    main.child.kill('SIGTERM');
    await untilStopping(main);
    upload.end(rest);

    const answer = await upload.outcome;
    expect(answer).toMatchObject({ status: 201 });
    const exit = await main.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(main.output()).not.toContain('Assertion failed');

    main = await startMain(mainEnv(f.dataDir, SPOOLING));
    const page = await request({ port: main.port, host: `${f.site}.sites.localhost` });
    expect(page.text).toContain('finished during the stop');
  });

  it('cuts off a deploy still uploading when the grace period ends, and publishes nothing', async () => {
    const f = await fixture();
    main = await startMain(mainEnv(f.dataDir, { ...SPOOLING, PLINTH_STOP_GRACE_S: String(GRACE_S), PLINTH_LOG_LEVEL: 'info' }));
    const body = updateBody(f, '<h1>never published</h1>');
    const upload = startUpdate(main, f, body);
    upload.write(body.subarray(0, 10));
    await untilSpooling(f);
    const stoppedAt = Date.now();
    main.child.kill('SIGTERM');
    // A client that never finishes its upload: one byte every 200 ms.
    let sent = 10;
    const dribble = setInterval(() => {
      if (sent < body.byteLength - 1) upload.write(body.subarray(sent, ++sent));
    }, 200);
    try {
      const answer = await upload.outcome;
      expect(answer).toHaveProperty('error');
      const exit = await main.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      const tookMs = Date.now() - stoppedAt;
      expect(tookMs).toBeGreaterThanOrEqual(GRACE_S * 1000 - 100);
      expect(tookMs).toBeLessThan(GRACE_S * 1000 + 10_000);
      expect(main.output()).toContain('server.grace_expired');
      expect(main.output()).not.toContain('Assertion failed');
    } finally {
      clearInterval(dribble);
      upload.req.destroy();
    }

    const store = openStore({ dir: f.dataDir });
    try {
      expect(store.getSite(f.site)?.liveRevision).toBe(f.revision);
    } finally {
      await store.close();
    }
    main = await startMain(mainEnv(f.dataDir, SPOOLING));
    const page = await request({ port: main.port, host: `${f.site}.sites.localhost` });
    expect(page.text).toContain('before');
  });

  it('stops accepting connections and refuses new deploys on open connections while it drains', async () => {
    const f = await fixture();
    main = await startMain(mainEnv(f.dataDir, { ...SPOOLING, PLINTH_STOP_GRACE_S: String(GRACE_S), PLINTH_LOG_LEVEL: 'info' }));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const get = (): Promise<number> =>
        new Promise((resolve, reject) => {
          const probe = slowUpload({ port: main!.port, host: `${f.site}.sites.localhost`, path: '/', method: 'GET', contentLength: 0, agent });
          probe.end();
          void probe.outcome.then((o) => ('status' in o ? resolve(o.status) : reject(new Error(o.error))));
        });
      // Opens the keep-alive connection the refused deploy will use.
      expect(await get()).toBe(200);

      // Something in flight keeps the server draining for a while.
      const body = updateBody(f, '<h1>slow</h1>');
      const holder = startUpdate(main, f, body);
      holder.write(body.subarray(0, 10));
      await untilSpooling(f);
      main.child.kill('SIGTERM');
      await untilStopping(main);

      // New connections are refused once the threads have closed their listen sockets.
      const newConnection = (): Promise<string> =>
        request({ port: main!.port, host: `${f.site}.sites.localhost` }).then(
          () => '',
          (err: Error) => err.message,
        );
      let refusedError = '';
      for (const deadline = Date.now() + 5000; refusedError === '' && Date.now() < deadline;) {
        refusedError = await newConnection();
        if (refusedError === '') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(refusedError).toMatch(/ECONNREFUSED|ECONNRESET/);
      const late = startUpdate(main, f, updateBody(f, '<h1>late</h1>'), agent);
      late.end(updateBody(f, '<h1>late</h1>'));
      const refused = await late.outcome;
      expect(refused).toMatchObject({ status: 503 });
      if ('status' in refused) {
        expect(refused.headers['retry-after']).toBe('5');
        expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unavailable' }, agent_message: expect.any(String) });
      }
      holder.end(body.subarray(10));
      expect(await holder.outcome).toMatchObject({ status: 201 });
      expect(await main.exited).toEqual({ code: 0, signal: null });
    } finally {
      agent.destroy();
    }
  });
});
