import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The process as an operator starts it (`node dist/main.js`), given what operators get wrong:
 * it refuses to start on a setting it does not know or a bucket it cannot use or that is not its
 * own, and a local install cannot be reached from the network. Each test starts several
 * processes (servers, the admin CLI), so this runs with the reliability project; the rules
 * behind the refusals are unit tables in the first line (test/config.test.ts,
 * test/store/bucket-gc.test.ts).
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
// Each test starts several processes; on a busy machine one start can take tens of seconds.
const START_TIMEOUT_MS = 90_000;
const started: MainProcess[] = [];
let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3('plinth-fail-closed');
});
afterAll(async () => {
  for (const main of started) await killMain(main);
  await s3?.stop();
});

async function start(env: Record<string, string>): Promise<MainProcess> {
  const main = await startMain(env, { timeoutMs: START_TIMEOUT_MS });
  started.push(main);
  return main;
}

/** The output of a start that must fail: the process exits 1 before it listens. */
async function refusal(env: Record<string, string>): Promise<string> {
  try {
    started.push(await startMain(env, { timeoutMs: START_TIMEOUT_MS }));
  } catch (err) {
    const message = (err as Error).message;
    expect(message).toMatch(/exited with 1 before listening/);
    return message;
  }
  throw new Error('the server started');
}

function plinth(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The owner a bucket's marker names, or undefined without a marker. */
async function markedOwner(bucket: string): Promise<{ kind: string; id: string } | undefined> {
  try {
    const found = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: 'plinth/owner.json' }));
    return JSON.parse(await found.Body!.transformToString()).owner;
  } catch {
    return undefined;
  }
}

let buckets = 0;
/** A new bucket of its own for a test, and the settings that name it. */
const freshBucket = (): Promise<Record<string, string>> => s3.createBucket(`plinth-closed-${++buckets}-${Date.now()}`);

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('settings that fail closed', { timeout: 180_000 }, () => {
  it('refuses to start on a mistyped PLINTH_* variable, naming it and the setting it resembles', async () => {
    // The typo of the incident: ignored, the node ran alone on the cluster's bucket.
    const refused = startMain(mainEnv(tempDir(), { PLINTH_DATABSE_URL: 'postgres://plinth@127.0.0.1:9/plinth' }), { timeoutMs: START_TIMEOUT_MS });
    await expect(refused).rejects.toThrow(/exited with 1 before listening/);
    await expect(refused).rejects.toThrow('PLINTH_DATABSE_URL is not a setting of Plinth (the closest one is PLINTH_DATABASE_URL)');
  });

  it("starts beside the plinth command's own variables", async () => {
    const main = await start(mainEnv(tempDir(), { PLINTH_API_URL: 'https://api.example.com', PLINTH_TOKEN: 'pl_example' }));
    expect((await request({ port: main.port, host: 'localhost' })).status).toBe(200);
  });
});

describe('where a local install listens', { timeout: 180_000 }, () => {
  it('listens on loopback only unless PLINTH_LISTEN_HOST says otherwise', async () => {
    const { PLINTH_LISTEN_HOST: _unset, ...defaults } = mainEnv(tempDir());
    const local = await start(defaults);
    expect(await accepts('127.0.0.1', local.port)).toBe(true);
    // Another address of this machine (127.0.0.2 stands for the network card: same machine, not the bound address).
    expect(await accepts('127.0.0.2', local.port)).toBe(false);

    const everywhere = await start(mainEnv(tempDir(), { PLINTH_LISTEN_HOST: '0.0.0.0' }));
    expect(await accepts('127.0.0.2', everywhere.port)).toBe(true);
  });
});

describe('the bucket at start-up', { timeout: 300_000 }, () => {
  it.each([
    [
      'a bucket that does not exist',
      () => ({ ...s3.env, PLINTH_S3_BUCKET: 'no-such-bucket' }),
      'the bucket "no-such-bucket" at http://127.0.0.1:',
      'there is no bucket of that name (NoSuchBucket)',
    ],
    ['an unknown access key', () => ({ ...s3.env, AWS_ACCESS_KEY_ID: 'NOT-A-KEY' }), 'cannot be used', 'the credentials were refused (InvalidAccessKeyId'],
    ['an endpoint nothing answers at', () => ({ ...s3.env, PLINTH_S3_ENDPOINT: 'http://127.0.0.1:9' }), 'http://127.0.0.1:9 cannot be reached', 'ECONNREFUSED'],
  ])('refuses %s, saying so', async (_what, settings, where, why) => {
    const output = await refusal(mainEnv(tempDir(), settings()));
    expect(output).toContain('PLINTH_S3_BUCKET: ');
    expect(output).toContain(where);
    expect(output).toContain(why);
  });

  it("marks a new bucket as its install's, and refuses a bucket marked as another install's until it is adopted", async () => {
    const bucket = await freshBucket();
    const firstDir = tempDir('plinth-first-');
    const owner = await start(mainEnv(firstDir, bucket));
    const marked = await markedOwner(bucket.PLINTH_S3_BUCKET!);
    expect(marked).toMatchObject({ kind: 'install' });
    await killMain(owner, 'SIGTERM');

    // Another install (its own data directory) would delete the first one's blobs as unreferenced.
    const otherDir = tempDir('plinth-other-');
    const output = await refusal(mainEnv(otherDir, bucket));
    expect(output).toContain(`belongs to the embedded install ${marked!.id}, not to the embedded install`);
    expect(output).toContain('plinth admin bucket adopt');
    expect(await markedOwner(bucket.PLINTH_S3_BUCKET!)).toEqual(marked);

    // Handed over on purpose: the other install starts, and the first one no longer does.
    const adopted = await plinth({ PLINTH_DATA_DIR: otherDir, ...bucket }, 'admin', 'bucket', 'adopt');
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(JSON.parse(adopted.stdout)).toMatchObject({ bucket: bucket.PLINTH_S3_BUCKET, owner: { kind: 'install' }, previous: marked });
    await start(mainEnv(otherDir, bucket));
    expect(await refusal(mainEnv(firstDir, bucket))).toContain(`not to the embedded install ${marked!.id}`);
  });

  it('refuses an unmarked bucket that holds blobs when its own records hold no site', async () => {
    const bucket = await freshBucket();
    const key = `blobs/ab/cd/ab${'cd'.padEnd(62, '0')}`;
    await s3.client.send(new PutObjectCommand({ Bucket: bucket.PLINTH_S3_BUCKET, Key: key, Body: 'a blob of someone' }));
    const output = await refusal(mainEnv(tempDir(), bucket));
    expect(output).toContain('holds blobs but no marker');
    expect(await markedOwner(bucket.PLINTH_S3_BUCKET!)).toBeUndefined();
  });
});

describe('one server per port and per data directory', { timeout: 180_000 }, () => {
  it('refuses a port another server listens on, and the first keeps every connection', async () => {
    const dir = tempDir('plinth-first-server-');
    const first = await start(mainEnv(dir));
    const account = await plinth({ PLINTH_DATA_DIR: dir }, 'admin', 'account', 'create', '--email', 'port-owner@example.com');
    expect(account.code, account.stderr).toBe(0);
    const token = (await plinth({ PLINTH_DATA_DIR: dir }, 'admin', 'token', 'create', '--email', 'port-owner@example.com')).stdout.trim();

    // Another install (its own data directory) told the same port: before, it shared it through SO_REUSEPORT.
    const output = await refusal(mainEnv(tempDir('plinth-second-server-'), { PLINTH_PORT: String(first.port) }));
    expect(output).toContain(`port ${first.port} on 127.0.0.1 is already in use by another process`);
    // Every connection still reaches the first server, which knows the token.
    for (let i = 0; i < 20; i++) {
      const me = await request({ port: first.port, host: 'api.localhost', path: '/v1/me', headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
    }
  });

  it('refuses a second server on a data directory in use, naming the first; plinth admin works beside it; a killed server leaves no lock', async () => {
    const dir = tempDir('plinth-locked-');
    const first = await start(mainEnv(dir));
    const output = await refusal(mainEnv(dir));
    expect(output).toContain(`Another Plinth server (pid ${first.child.pid}, port ${first.port}) is running on the data directory ${dir}`);
    expect((await request({ port: first.port, host: 'localhost' })).status).toBe(200);

    const admin = await plinth({ PLINTH_DATA_DIR: dir }, 'admin', 'account', 'create', '--email', 'beside@example.com');
    expect(admin.code, admin.stderr).toBe(0);

    await killMain(first, 'SIGKILL');
    const next = await start(mainEnv(dir));
    expect((await request({ port: next.port, host: 'localhost' })).status).toBe(200);
  });
});

describe('signals', { timeout: 180_000 }, () => {
  it('logs SIGHUP and goes on serving; SIGTERM still stops it cleanly', async () => {
    const main = await start(mainEnv(tempDir()));
    main.child.kill('SIGHUP');
    await waitUntil(() => main.output().includes('server.hangup_ignored'), 10_000);
    expect(main.output()).toContain('"event":"server.hangup_ignored"');
    expect((await request({ port: main.port, host: 'localhost' })).status).toBe(200);
    expect(main.child.exitCode).toBeNull();
    main.child.kill('SIGTERM');
    expect((await main.exited).code).toBe(0);
  });

  it('logs a SIGHUP that comes while the node starts, and starts all the same', async () => {
    // A node can take minutes to start (a cluster replica built from a snapshot); a hang-up
    // then ended it at once, before the handler above was in place.
    let hungUp = false;
    const main = await startMain(mainEnv(tempDir(), { PLINTH_LOG_LEVEL: 'info' }), {
      timeoutMs: START_TIMEOUT_MS,
      whileStarting: (output, child) => {
        if (hungUp || !output.includes('"event":"config.loaded"')) return;
        hungUp = true;
        child.kill('SIGHUP');
      },
    });
    started.push(main);
    expect(hungUp).toBe(true);
    await waitUntil(() => main.output().includes('still starting'), 10_000);
    expect((await request({ port: main.port, host: 'localhost' })).status).toBe(200);
    expect(main.child.exitCode).toBeNull();
    main.child.kill('SIGTERM');
    expect((await main.exited).code).toBe(0);
  });
});
