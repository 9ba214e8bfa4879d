import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { BucketOptions } from '../../src/store/index.js';

/**
 * A private S3-compatible server for a test file: s3rver, the stand-in for AWS S3, R2, MinIO or
 * Ceph RGW (none of which installs here), in a child process on a free loopback port with a
 * temporary directory and one bucket. Stopping the process is how a test takes the bucket away.
 */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The server's settings, for `loadConfig`. */
  env: Record<string, string>;
  /** The store's bucket options (add `graceMs`, `cacheBytes` and any test knobs). */
  options(extra?: Partial<BucketOptions>): BucketOptions;
  /** Requests the server received so far (method, URL with query, whether it was a CopyObject). */
  requests(): S3Request[];
  /** Every object under `blobs/`, listed page by page (small pages, to go through pagination). */
  list(): Promise<Array<{ key: string; size: number }>>;
  get(key: string): Promise<Buffer>;
  put(key: string, bytes: Buffer): Promise<void>;
  remove(key: string): Promise<void>;
  /** Stops the server but keeps its files (an outage); `resume` starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

export interface S3Request {
  method: string;
  url: string;
  copy: boolean;
}

const CHILD = fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url));
// s3rver's only account.
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3(bucket = 'plinth-test'): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-s3-'));
  let child: ChildProcess | undefined;
  let port = 0;
  const requests: S3Request[] = [];

  const start = async (): Promise<void> => {
    // --openssl-legacy-provider: s3rver's ListObjectsV2 continuation tokens use DES, and without
    // it a listing that needs a second page fails with a 500.
    const started = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, dir, bucket, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    let output = '';
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let pending = '';
    port = await new Promise<number>((resolve, reject) => {
      started.stdout!.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          const parsed = JSON.parse(line) as { port?: number } & S3Request;
          if (parsed.port !== undefined) resolve(parsed.port);
          else requests.push(parsed);
        }
      });
      started.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${output}`)));
    });
  };

  const stopChild = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const region = 'us-east-1';
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

  return {
    endpoint,
    bucket,
    region,
    credentials: CREDENTIALS,
    env: {
      PLINTH_S3_BUCKET: bucket,
      PLINTH_S3_ENDPOINT: endpoint,
      PLINTH_S3_REGION: region,
      PLINTH_S3_FORCE_PATH_STYLE: '1',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    options: (extra = {}) => ({ bucket, endpoint, region, forcePathStyle: true, credentials: CREDENTIALS, cacheBytes: 0, graceMs: 3600_000, ...extra }),
    async list() {
      const objects: Array<{ key: string; size: number }> = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'blobs/', MaxKeys: 5, ContinuationToken: token }));
        for (const object of page.Contents ?? []) objects.push({ key: object.Key!, size: object.Size! });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return objects;
    },
    requests: () => [...requests],
    async get(key) {
      const found = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await found.Body!.transformToByteArray());
    },
    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    pause: stopChild,
    resume: start,
    async stop() {
      client.destroy();
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
