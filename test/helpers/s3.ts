import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3rver, type S3rverRequest, type S3rverServer } from '../../bench/lib/s3rver.mjs';
import type { BucketOptions } from '../../src/store/index.js';
import { waitUntil } from './wait.js';

/**
 * A private S3-compatible server for a test file: s3rver, the stand-in for AWS S3, R2, MinIO or
 * Ceph RGW (none of which installs here), in a child process on a free loopback port with a
 * temporary directory and one bucket (bench/lib/s3rver.mjs starts it, for the tests and the
 * cluster bench alike). Stopping the process is how a test takes the bucket away.
 */
export interface TestS3 extends Omit<S3rverServer, 'options'> {
  /** The store's bucket options (add `graceMs`, `cacheBytes` and any test knobs). */
  options(extra?: Partial<BucketOptions>): BucketOptions;
  /** Requests the server received so far (method, URL with query, whether it was a CopyObject). */
  requests(): S3Request[];
  /**
   * Resolves once `requests()` holds every request the server received before this call: the
   * server reports each on its output, another pipe than its answers, so a line may trail the
   * answer to its request. A request of its own goes after them, and is awaited (and left out).
   */
  settle(): Promise<void>;
  /** Where the request log ends now, once it has caught up (see `settle`). */
  mark(): Promise<number>;
  /** Requests since `from` (an index into the request log, from `mark`), once the log has caught up. */
  sentSince(from: number): Promise<S3Request[]>;
  /** Every object under `blobs/`, listed page by page (small pages, to go through pagination). */
  list(): Promise<Array<{ key: string; size: number }>>;
  get(key: string): Promise<Buffer>;
  put(key: string, bytes: Buffer): Promise<void>;
  remove(key: string): Promise<void>;
  /** Makes another bucket on the same server and returns Plinth's settings for it. */
  createBucket(name: string): Promise<Record<string, string>>;
  /** A client of the bucket, for what the helpers above do not cover. */
  client: S3Client;
}

export type S3Request = S3rverRequest;

/** An object's upload: a PUT that is neither a CopyObject nor a part of a multipart upload. */
export const isObjectPut = (r: Pick<S3Request, 'method' | 'url' | 'copy'>): boolean => r.method === 'PUT' && !r.copy && !r.url.includes('uploadId');

export async function startS3(bucket = 'plinth-test'): Promise<TestS3> {
  const server = await startS3rver(bucket);
  const { endpoint, region, credentials } = server;
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

  const SETTLE = '/?plinth-settle=';
  const requests = (): S3Request[] => server.requests().filter((r) => !r.url.startsWith(SETTLE));
  const settle = async (): Promise<void> => {
    const url = `${SETTLE}${randomUUID()}`;
    await new Promise<void>((resolve) => {
      http
        .get(`${endpoint}${url}`, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', () => resolve());
    });
    if (!(await waitUntil(() => server.requests().some((r) => r.url === url), 5000, 2))) throw new Error('s3rver did not report a request in 5 s');
  };
  return {
    ...server,
    client,
    requests,
    settle,
    async mark() {
      await settle();
      return requests().length;
    },
    async sentSince(from) {
      await settle();
      return requests().slice(from);
    },
    options: (extra = {}) => server.options(extra) as BucketOptions,
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
    async get(key) {
      const found = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await found.Body!.transformToByteArray());
    },
    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return { ...server.env, PLINTH_S3_BUCKET: name };
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async stop() {
      client.destroy();
      await server.stop();
    },
  };
}
