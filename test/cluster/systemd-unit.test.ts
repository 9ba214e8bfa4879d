import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../helpers/edge.js';
import { request } from '../helpers/http.js';
import { killMain, startMain, type MainProcess } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';

/**
 * deploy/plinth.service and its example settings, deploy/plinth.env (and deploy/nginx-readyz.service,
 * which keeps nginx's list of nodes): systemd's own checker
 * (`systemd-analyze verify`, Debian's systemd package) accepts the unit; every setting of the
 * example is one Plinth knows, with a valid value; and the unit's command, run as systemd would run
 * it (its working directory, its environment alone, the example's settings with this machine's
 * addresses and services in place of the examples), starts a cluster node that is ready, and
 * that the unit's stop signal ends with status 0 well within the unit's stop timeout. No systemd
 * runs here as PID 1, so the unit is never started by systemd itself.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const UNIT_PATH = fileURLToPath(new URL('../../deploy/plinth.service', import.meta.url));
const ENV_PATH = fileURLToPath(new URL('../../deploy/plinth.env', import.meta.url));
/** Where the unit expects Plinth: the tests run the checkout in its place. */
const INSTALL = '/opt/plinth';

/** `Key=value` lines of one section of a unit file, in order. */
function unitSection(text: string, section: string): Array<[string, string]> {
  const lines = text.split('\n').map((line) => line.trim());
  const start = lines.indexOf(`[${section}]`);
  expect(start, `[${section}] in deploy/plinth.service`).toBeGreaterThanOrEqual(0);
  const entries: Array<[string, string]> = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('[')) break;
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    entries.push([line.slice(0, eq), line.slice(eq + 1)]);
  }
  return entries;
}

/** An EnvironmentFile as systemd reads it: `KEY=value` lines, comments, optional double quotes. */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    expect(match, `an assignment: ${line}`).not.toBeNull();
    const value = match![2]!;
    env[match![1]!] = value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return env;
}

const unitText = readFileSync(UNIT_PATH, 'utf8');
const service = new Map(unitSection(unitText, 'Service'));
const example = environmentFile(readFileSync(ENV_PATH, 'utf8'));

let pg: TestPostgres;
let s3: TestS3;
let node: MainProcess | undefined;

beforeAll(async () => {
  [pg, s3] = await Promise.all([startPostgres(), startS3('plinth-unit')]);
}, 60_000);

afterAll(async () => {
  await killMain(node);
  await pg?.stop();
  await s3?.stop();
});

describe('the shipped systemd unit', () => {
  it("passes systemd's own checks", () => {
    const verified = spawnSync('systemd-analyze', ['verify', UNIT_PATH], { encoding: 'utf8' });
    expect(verified.error, 'systemd-analyze (Debian: apt-get install systemd)').toBeUndefined();
    expect({ status: verified.status, output: `${verified.stdout}${verified.stderr}` }).toEqual({ status: 0, output: '' });
  });

  it("runs deploy/nginx-readyz.sh beside nginx, with a unit that passes systemd's checks too", () => {
    const path = fileURLToPath(new URL('../../deploy/nginx-readyz.service', import.meta.url));
    const verified = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
    expect({ status: verified.status, output: `${verified.stdout}${verified.stderr}` }).toEqual({ status: 0, output: '' });
    const readyz = new Map(unitSection(readFileSync(path, 'utf8'), 'Service'));
    for (const key of ['ExecStartPre', 'ExecStart']) {
      const [shell, script] = readyz.get(key)!.split(' ');
      expect(shell).toBe('/bin/sh');
      expect(existsSync(script!.replace(INSTALL, ROOT)), `${key}: ${script}`).toBe(true);
    }
    expect(readyz.get('ExecStartPre')).toContain(' --once ');
    expect(new Map(unitSection(readFileSync(path, 'utf8'), 'Unit')).get('Before')).toBe('nginx.service');
  });

  it('runs the built server from its install directory with its settings file', () => {
    expect(service.get('ExecStart')).toBe(`/usr/bin/node ${INSTALL}/dist/main.js`);
    expect(service.get('WorkingDirectory')).toBe(INSTALL);
    expect(service.get('EnvironmentFile')).toBe('/etc/plinth/plinth.env');
    expect(service.get('Environment')).toBe('PLINTH_DATA_DIR=/var/lib/plinth');
    expect(service.get('StateDirectory')).toBe('plinth');
  });

  it('gives a stopping node longer than its drain before it kills', () => {
    const graceS = loadConfig({}).stopGraceMs / 1000;
    expect(service.get('KillSignal')).toBe('SIGTERM');
    expect(Number(service.get('TimeoutStopSec'))).toBeGreaterThanOrEqual(graceS + 10);
  });

  it('comes with example settings that are all settings Plinth knows, with valid values', () => {
    expect(() => loadConfig({ ...example, PLINTH_DATA_DIR: '/var/lib/plinth' })).not.toThrow();
    const config = loadConfig({ ...example, PLINTH_DATA_DIR: '/var/lib/plinth' });
    expect(config.databaseUrl).toBeDefined();
    expect(config.blobs.bucket).toBeDefined();
  });

  it('starts a ready node as systemd would run it, which its stop signal ends with status 0 in time', async () => {
    const opsPort = await freePort();
    // The example's addresses and services replaced by this machine's, as the guide says to.
    const env: Record<string, string> = {
      PATH: '/usr/bin:/bin',
      ...example,
      PLINTH_LISTEN_HOST: '127.0.0.1',
      PLINTH_PORT: String(await freePort()),
      PLINTH_OPS_HOST: '127.0.0.1',
      PLINTH_OPS_PORT: String(opsPort),
      PLINTH_DATABASE_URL: pg.url,
      ...s3.env,
      PLINTH_THREADS: '1',
      PLINTH_INGEST_THREADS: '1',
      [service.get('Environment')!.split('=')[0]!]: tempDir('plinth-unit-data-'),
    };
    const [command, ...args] = service.get('ExecStart')!.split(' ');
    node = await startMain(env, {
      command: [command!, ...args.map((arg) => arg.replace(INSTALL, ROOT))],
      cwd: service.get('WorkingDirectory')!.replace(INSTALL, ROOT),
      cleanEnv: true,
      timeoutMs: 60_000,
    });
    const ready = await request({ port: opsPort, host: '127.0.0.1', path: '/readyz' });
    expect(ready.status, ready.text).toBe(200);
    expect((await request({ port: node.port, host: example.PLINTH_DOCS_HOST!, path: '/' })).status).toBe(200);

    const stopping = Date.now();
    node.child.kill(service.get('KillSignal') as NodeJS.Signals);
    const ended = await node.exited;
    expect(ended).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopping).toBeLessThan(Number(service.get('TimeoutStopSec')) * 1000);
  }, 90_000);
});
