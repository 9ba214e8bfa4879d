// A private S3-compatible server: s3rver, the stand-in for AWS S3, R2, MinIO or Ceph RGW (none of
// which installs here), in a child process on a free loopback port with a temporary directory and
// one bucket. Stopping the process is how a test takes the bucket away. Shared by the tests
// (through test/helpers/s3.ts, which adds an S3 client and types) and the cluster bench.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url));
// s3rver's only account.
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';

/**
 * Starts s3rver with one bucket. Resolves { endpoint, bucket, region, credentials, env (Plinth's
 * settings for it), requests() (what it received so far), answered() (those answered, with when), pause(), resume(), stop() }.
 */
export async function startS3rver(bucket = 'plinth-test') {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-s3-'));
  let child;
  let port = 0;
  const requests = [];
  const answered = [];

  const start = async () => {
    // --openssl-legacy-provider: s3rver's ListObjectsV2 continuation tokens use DES, and without
    // it a listing that needs a second page fails with a 500.
    const started = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, dir, bucket, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    let output = '';
    started.stderr.on('data', (chunk) => (output += chunk.toString()));
    let pending = '';
    port = await new Promise((resolve, reject) => {
      started.stdout.on('data', (chunk) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop();
        for (const line of lines) {
          const parsed = JSON.parse(line);
          if (parsed.port !== undefined) resolve(parsed.port);
          else if (parsed.done) answered.push(parsed);
          else requests.push(parsed);
        }
      });
      started.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${output}`)));
    });
  };

  const stopChild = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    region: REGION,
    credentials: CREDENTIALS,
    env: {
      PLINTH_S3_BUCKET: bucket,
      PLINTH_S3_ENDPOINT: endpoint,
      PLINTH_S3_REGION: REGION,
      PLINTH_S3_FORCE_PATH_STYLE: '1',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    options: (extra = {}) => ({ bucket, endpoint, region: REGION, forcePathStyle: true, credentials: CREDENTIALS, cacheBytes: 0, graceMs: 3600_000, ...extra }),
    requests: () => [...requests],
    answered: () => [...answered],
    pid: () => child?.pid,
    pause: stopChild,
    resume: start,
    async stop() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}-partial`, { recursive: true, force: true });
    },
  };
}
