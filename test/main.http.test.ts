import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/index.js';
import { request } from './helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from './helpers/main-process.js';
import { publishSite, tempDir } from './helpers/sites.js';

// Runs the built service as operators do (`npm test` builds first).

/** Whether a process with this PID still runs (signal 0 only asks). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('plinth process', () => {
  const dataDir = tempDir();
  let started: MainProcess;

  beforeAll(async () => {
    const store = await openStore({ dir: dataDir });
    await publishSite(store, 'two-threads', { 'index.html': '<h1>served by a thread</h1>' });
    await store.close();
    started = await startMain(mainEnv(dataDir, { PLINTH_THREADS: '2' }), { timeoutMs: 60_000 });
  }, 90_000);

  afterAll(() => killMain(started));

  it('prints its local addresses', () => {
    expect(started.output()).toContain('2 HTTP threads');
    expect(started.output()).toContain(`http://api.localhost:${started.port}/v1`);
    expect(started.output()).toContain(`http://<name>.sites.localhost:${started.port}`);
  });

  it('writes nothing at start-up but JSON log lines and the banner (no library chatter on the console)', () => {
    const beforeBanner = started.output().slice(0, started.output().indexOf('Plinth is running'));
    for (const line of beforeBanner.split('\n').filter((text) => text.trim() !== '')) {
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    }
  });

  it('serves sites from all threads on one port', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => request({ port: started.port, host: 'two-threads.sites.localhost' })));
    for (const res of responses) {
      expect(res.status).toBe(200);
      expect(res.text).toContain('served by a thread');
    }
  });

  it('serves a site published while it runs (threads read the shared store)', async () => {
    const store = await openStore({ dir: dataDir });
    await publishSite(store, 'published-later', { 'index.html': '<h1>fresh</h1>' });
    await store.close();
    const res = await request({ port: started.port, host: 'published-later.sites.localhost' });
    expect(res.text).toContain('fresh');
  });

  it('shuts down cleanly on SIGTERM', async () => {
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
  });
});

// The banner wait lasts its five seconds whatever the machine does; the start-up checks run meanwhile.
describe.concurrent('waiting for the start banner', () => {
  it('ends the process it started when the banner does not come in time', async () => {
    const pidFile = join(tempDir(), 'pid');
    // A process that starts, says nothing and would run for ever.
    const silent = [process.execPath, '-e', `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`];
    await expect(startMain({}, { command: silent, timeoutMs: 5000 })).rejects.toThrow('no banner in time');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(running(pid), `process ${pid} was left running`).toBe(false);
  });
});

describe.concurrent('start-up checks', () => {
  it('refuses to start on the pure-JS uWS fallback, with a clear message', async () => {
    const refused = startMain({ UWS_USE_FALLBACK: '1', PLINTH_PORT: '0', PLINTH_DATA_DIR: tempDir() });
    await expect(refused).rejects.toThrow(/exited with 1 before listening[\s\S]*native binary/);
  });

  it('refuses to start with invalid configuration, listing the problems', async () => {
    const refused = startMain({ PLINTH_PORT: 'eighty', PLINTH_THREADS: 'many', PLINTH_DATA_DIR: tempDir() });
    await expect(refused).rejects.toThrow(/exited with 1 before listening[\s\S]*PLINTH_PORT[\s\S]*PLINTH_THREADS/);
  });
});
