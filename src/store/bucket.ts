import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config.js';
import { BUCKET_UNAVAILABLE_CODE } from '../errors.js';
import { createObjectRequests, type ObjectRequests } from './bucket-http.js';
import type { BlobBucket, BucketObject, BucketOptions, BucketOwner, Encoding } from './types.js';

/**
 * The blob bucket through @aws-sdk/client-s3, with only the calls AWS S3, Cloudflare R2, MinIO
 * and Ceph RGW all support: HeadObject, GetObject, PutObject, CopyObject, DeleteObject,
 * ListObjectsV2 and the multipart upload calls (Create, UploadPart, Complete, Abort). A deploy's
 * hot calls, HeadObject and PutObject of a body held in memory, go out through a direct client
 * instead (bucket-http.ts, under half the SDK's CPU per request), to the same URL.
 *
 * Keys follow the nested local layout, `blobs/<aa>/<bb>/<sha256>` with `.br` / `.gz` beside it, so
 * the blobs of a data directory made before the flat layout (blob-store.ts) go up with any sync
 * tool (`aws s3 sync <dataDir>/blobs s3://<bucket>/blobs`, leaving out `tmp/` and `pins/`).
 */

/**
 * The SDK, loaded when the first bucket is made: it costs a third of a second of start-up, which
 * every CLI command and every node without a bucket would pay for nothing.
 */
const requireModule = createRequire(import.meta.url);
let sdk: typeof import('@aws-sdk/client-s3') | undefined;
const loadSdk = (): typeof import('@aws-sdk/client-s3') => (sdk ??= requireModule('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3'));

/** The `code` of an error for a blob the bucket does not hold. */
export const NOT_IN_BUCKET = 'BLOB_NOT_IN_BUCKET';

const PREFIX = 'blobs/';
const KEY = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})(\.br|\.gz)?$/;
const SUFFIX: Record<Encoding, string> = { br: '.br', gzip: '.gz' };
const ENCODING_OF: Record<string, Encoding> = { '.br': 'br', '.gz': 'gzip' };
/** The metadata field `touch` stamps: a self-copy does not move `LastModified` on every store. */
const TOUCHED_META = 'plinth-touched-ms';

const DEFAULT_MULTIPART_THRESHOLD_BYTES = 16 * 1024 * 1024;
const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/**
 * A blob at most this large goes up from memory rather than as a stream: the SDK resends a body
 * it holds (after correcting its clock from a `RequestTimeTooSkewed` answer, or on a dropped
 * connection) but never a stream, and a small file costs one read. `publish` runs 32 uploads at
 * once, so at most 32 MiB of bodies are held.
 */
const BUFFERED_BODY_BYTES = 1024 * 1024;
/** Parts of one blob in flight at once. */
const PART_CONCURRENCY = 2;
// A bucket that does not answer must fail a request quickly (a visitor is waiting on it), yet a
// large transfer that keeps moving may take as long as it takes: so a connect bound and an idle
// bound, no total bound. The SDK retries a failed call twice more (its standard mode).
const CONNECT_TIMEOUT_MS = 3000;
const IDLE_TIMEOUT_MS = 15_000;

export interface S3Bucket extends BlobBucket {
  /** Every object under `prefix` (default: the blobs'), page by page. */
  list(prefix?: string): AsyncIterable<BucketObject>;
  keyOf(sha256: string, encoding?: Encoding): string;
  /**
   * Uploads the file at `path` (`size` bytes) under `key`, in parts past the threshold. `bytes`:
   * its bytes, when the caller holds them (a small blob whose file is written after the answer).
   */
  upload(key: string, path: string, size: number, bytes?: Buffer): Promise<void>;
  /** Puts `body`, held in memory, under `key` (a pack: its parts go as one body, not copied into one buffer first). */
  put(key: string, body: Buffer | readonly Buffer[]): Promise<void>;
  /** The object's bytes; rejects with `NOT_IN_BUCKET` or `BUCKET_UNAVAILABLE_CODE`. */
  download(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** `size` bytes of the object from `offset` (a packed object's range of its pack); rejects as `download`. */
  downloadRange(key: string, offset: number, size: number): Promise<AsyncIterable<Uint8Array>>;
  /** Renews the object's age (a copy onto itself with a fresh stamp), so garbage collection spares it. */
  touch(key: string, at: number): Promise<void>;
  /** Writes the marker naming the bucket's owner (see bucket-owner.ts); `by` says who wrote it, for people. */
  writeOwner(owner: BucketOwner, by: string): Promise<void>;
  /**
   * Writes a small object outside `blobs/`, reads it back and deletes it: rejects with what the
   * bucket answered (the SDK's own error, not mapped), or an error with code `PROBE_MISMATCH`.
   */
  probe(): Promise<void>;
  /** Calls that failed with `BUCKET_UNAVAILABLE_CODE` so far (a missing object is no failure). */
  readonly errors: number;
  close(): void;
}

/** The marker object: outside `blobs/`, so no listing of blobs or garbage collection ever sees it. */
export const OWNER_KEY = 'plinth/owner.json';
const PROBE_PREFIX = 'plinth/probe/';

/** The store's bucket options from the configuration; undefined without `PLINTH_S3_BUCKET`. */
export function bucketOptionsOf(config: Readonly<Config>): BucketOptions | undefined {
  const { bucket, endpoint, region, forcePathStyle, credentials, cacheBytes, packMaxBytes } = config.blobs;
  if (bucket === undefined) return undefined;
  return {
    bucket,
    ...(endpoint !== undefined ? { endpoint } : {}),
    region,
    forcePathStyle,
    ...(credentials !== undefined ? { credentials: { ...credentials } } : {}),
    cacheBytes,
    graceMs: config.blobGraceMs,
    packMaxBytes,
  };
}

export interface BucketHooks {
  /** Told of each blob object deleted (the ledger forgets it); its failure fails nothing. */
  onDeleted?(key: string): Promise<void>;
}

export function createS3Bucket(options: BucketOptions, hooks: BucketHooks = {}): S3Bucket {
  const {
    AbortMultipartUploadCommand,
    CompleteMultipartUploadCommand,
    CopyObjectCommand,
    CreateMultipartUploadCommand,
    DeleteObjectCommand,
    GetObjectCommand,
    HeadObjectCommand,
    ListObjectsV2Command,
    PutObjectCommand,
    S3Client,
    UploadPartCommand,
  } = loadSdk();
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle,
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    // The SDK's default adds a CRC32 to every upload; for a streamed body that means aws-chunked
    // framing, which some S3-compatible stores (s3rver among them) keep as part of the object.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: IDLE_TIMEOUT_MS },
    // Each call would otherwise sort the SDK's middleware into a handler anew: a third of the
    // CPU a small upload costs this process (nothing here changes the middleware after creation).
    cacheMiddleware: true,
  });
  const Bucket = options.bucket;
  const fast = objectRequestsOf(client, options);
  const threshold = options.multipartThresholdBytes ?? DEFAULT_MULTIPART_THRESHOLD_BYTES;
  const partBytes = options.partSizeBytes ?? DEFAULT_PART_BYTES;

  const keyOf = (sha256: string, encoding?: Encoding): string =>
    `${PREFIX}${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}${encoding === undefined ? '' : SUFFIX[encoding]}`;

  let errors = 0;
  const counted = (err: Error): Error => {
    if ((err as { code?: string }).code === BUCKET_UNAVAILABLE_CODE) errors++;
    return err;
  };

  async function call<T>(key: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      throw counted(bucketError(err, key));
    }
  }

  async function head(key: string): Promise<BucketObject | undefined> {
    try {
      const found = fast
        ? await fast.head(key)
        : await client.send(new HeadObjectCommand({ Bucket, Key: key })).then((answer) => ({
            size: answer.ContentLength ?? 0,
            lastModifiedMs: answer.LastModified?.getTime() ?? 0,
            metadata: answer.Metadata ?? {},
          }));
      const stamped = Number(found.metadata[TOUCHED_META]);
      const modified = found.lastModifiedMs;
      return { key, size: found.size, touchedMs: Number.isFinite(stamped) ? Math.max(modified, stamped) : modified };
    } catch (err) {
      const mapped = counted(bucketError(err, key));
      if ((mapped as { code?: string }).code === NOT_IN_BUCKET) return undefined;
      throw mapped;
    }
  }

  async function uploadInParts(key: string, path: string, size: number): Promise<void> {
    const { UploadId } = await call(key, () => client.send(new CreateMultipartUploadCommand({ Bucket, Key: key })));
    try {
      const count = Math.ceil(size / partBytes);
      const parts: Array<{ ETag: string; PartNumber: number }> = [];
      await forEachLimit(
        Array.from({ length: count }, (_, i) => i),
        PART_CONCURRENCY,
        async (index) => {
          const start = index * partBytes;
          const end = Math.min(size, start + partBytes) - 1;
          const sent = await call(key, () =>
            resendIfClockCorrected(() =>
              client.send(
                new UploadPartCommand({
                  Bucket,
                  Key: key,
                  UploadId,
                  PartNumber: index + 1,
                  Body: createReadStream(path, { start, end }),
                  ContentLength: end - start + 1,
                }),
              ),
            ),
          );
          parts[index] = { ETag: sent.ETag!, PartNumber: index + 1 };
        },
      );
      await call(key, () => client.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } })));
    } catch (err) {
      // Parts of an upload never completed are billed until aborted; best effort, the bucket's
      // lifecycle rule for incomplete uploads catches the rest.
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  async function get(key: string, Range?: string): Promise<AsyncIterable<Uint8Array>> {
    const found = await call(key, () => client.send(new GetObjectCommand({ Bucket, Key: key, ...(Range !== undefined ? { Range } : {}) })));
    const body = found.Body as Readable | undefined;
    if (body === undefined) throw counted(bucketError(new Error('GetObject answered without a body'), key));
    return mapErrors(body, key, counted);
  }

  /** Whether a request for `key` (a HEAD, which the direct client resends once it corrects the clock) moved the clock offset. */
  async function clockCorrectedBy(key: string): Promise<boolean> {
    if (fast === undefined) return false;
    const before = client.config.systemClockOffset ?? 0;
    await fast.head(key).catch(() => undefined);
    return (client.config.systemClockOffset ?? 0) !== before;
  }

  return {
    keyOf,
    head,
    parseKey(key) {
      const match = KEY.exec(key);
      if (!match || !match[3]!.startsWith(match[1]! + match[2]!)) return undefined;
      return match[4] === undefined ? { sha256: match[3]! } : { sha256: match[3]!, encoding: ENCODING_OF[match[4]]! };
    },

    async upload(key, path, size, bytes) {
      // Bytes held in memory (at most a pack's bound) go as one body, whatever their size.
      if (bytes === undefined && size > threshold) return uploadInParts(key, path, size);
      if (bytes !== undefined || size <= BUFFERED_BODY_BYTES) {
        const body = bytes ?? (await readFile(path));
        await call(key, async () => {
          if (fast) await fast.put(key, body, sha256Of(key));
          else await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentLength: body.byteLength }));
        });
        return;
      }
      await call(key, () =>
        resendIfClockCorrected(
          () => client.send(new PutObjectCommand({ Bucket, Key: key, Body: createReadStream(path), ContentLength: size })),
          () => clockCorrectedBy(key),
        ),
      );
    },

    async put(key, body) {
      await call(key, async () => {
        if (fast) await fast.put(key, body);
        else {
          const whole = Buffer.isBuffer(body) ? body : Buffer.concat(body);
          await client.send(new PutObjectCommand({ Bucket, Key: key, Body: whole, ContentLength: whole.byteLength }));
        }
      });
    },

    download: (key) => get(key),
    downloadRange: (key, offset, size) => get(key, `bytes=${offset}-${offset + size - 1}`),

    async touch(key, at) {
      await call(key, () =>
        client.send(
          new CopyObjectCommand({
            Bucket,
            Key: key,
            CopySource: `${Bucket}/${key}`,
            MetadataDirective: 'REPLACE',
            Metadata: { [TOUCHED_META]: String(at) },
          }),
        ),
      );
    },

    async readOwner() {
      let text: string;
      try {
        const found = await client.send(new GetObjectCommand({ Bucket, Key: OWNER_KEY }));
        text = (await found.Body?.transformToString('utf8')) ?? '';
      } catch (err) {
        const mapped = bucketError(err, OWNER_KEY);
        if ((mapped as { code?: string }).code === NOT_IN_BUCKET) return undefined;
        throw mapped;
      }
      return parseOwner(text);
    },

    async writeOwner(owner, by) {
      const body = JSON.stringify({ owner, written_at: new Date().toISOString(), written_by: by }, null, 2);
      await call(OWNER_KEY, () => client.send(new PutObjectCommand({ Bucket, Key: OWNER_KEY, Body: body, ContentType: 'application/json' })));
    },

    async probe() {
      const Key = `${PROBE_PREFIX}${randomUUID()}`;
      const written = `plinth start-up check ${Key}`;
      await client.send(new PutObjectCommand({ Bucket, Key, Body: written }));
      try {
        const found = await client.send(new GetObjectCommand({ Bucket, Key }));
        const read = (await found.Body?.transformToString('utf8')) ?? '';
        if (read !== written)
          throw Object.assign(new Error(`${Key} read back ${read.length} bytes other than the ${written.length} written`), { code: 'PROBE_MISMATCH' });
      } finally {
        await client.send(new DeleteObjectCommand({ Bucket, Key }));
      }
    },

    async *list(prefix = PREFIX) {
      let ContinuationToken: string | undefined;
      do {
        const page = await call(prefix, () => client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken })));
        for (const object of page.Contents ?? []) {
          if (object.Key === undefined) continue;
          yield { key: object.Key, size: object.Size ?? 0, touchedMs: object.LastModified?.getTime() ?? 0 };
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken !== undefined);
    },

    async delete(key) {
      await call(key, () => client.send(new DeleteObjectCommand({ Bucket, Key: key })));
      // A row left behind is harmless: it is as old as the object was, too old to be believed.
      await hooks.onDeleted?.(key).catch(() => undefined);
    },

    get errors() {
      return errors;
    },
    close: () => {
      fast?.close();
      client.destroy();
    },
  };
}

/**
 * The direct client of a deploy's PUTs and HEADs (bucket-http.ts), on the URL and signing region
 * the SDK's endpoint rules give this bucket, so addressing (path style or virtual host, AWS or a
 * custom endpoint) is the SDK's; the clock offset is shared with the SDK client, and credentials
 * come from it when none are configured (its provider chain, refreshed as it refreshes them).
 * Undefined, leaving every call to the SDK, for an endpoint those rules do not sign with plain
 * SigV4.
 */
function objectRequestsOf(client: S3Client, options: BucketOptions): ObjectRequests | undefined {
  let base: URL;
  let signingRegion: string;
  try {
    const resolved = client.config.endpointProvider({
      Bucket: options.bucket,
      Region: options.region,
      ...(options.endpoint !== undefined ? { Endpoint: options.endpoint } : {}),
      ForcePathStyle: options.forcePathStyle,
      UseFIPS: false,
      UseDualStack: false,
      Accelerate: false,
      UseGlobalEndpoint: false,
      DisableMultiRegionAccessPoints: false,
      UseArnRegion: false,
    });
    const scheme = (resolved.properties?.authSchemes as Array<{ name?: string; signingName?: string; signingRegion?: string }> | undefined)?.[0];
    if (scheme?.name !== 'sigv4' || scheme.signingName !== 's3') return undefined;
    base = new URL(resolved.url.href);
    signingRegion = scheme.signingRegion ?? options.region;
  } catch {
    return undefined;
  }
  const { credentials } = options;
  const config = client.config;
  return createObjectRequests({
    base,
    region: signingRegion,
    credentials: credentials !== undefined ? () => Promise.resolve(credentials) : () => config.credentials(),
    clock: {
      get offsetMs() {
        return config.systemClockOffset ?? 0;
      },
      set offsetMs(offset: number) {
        config.systemClockOffset = offset;
      },
    },
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
  });
}

/** The sha256 an identity blob's key names (its bytes' hash), for the request's payload hash; undefined for a variant. */
function sha256Of(key: string): string | undefined {
  const match = KEY.exec(key);
  return match !== null && match[4] === undefined ? match[3] : undefined;
}

/**
 * The owner a marker names. A marker that is not one of ours (unreadable, another shape) is an
 * error: no installation may take the bucket for its own until an operator adopts it.
 */
function parseOwner(text: string): BucketOwner {
  let owner: { kind?: unknown; id?: unknown } | undefined;
  try {
    owner = (JSON.parse(text) as { owner?: { kind?: unknown; id?: unknown } } | null)?.owner;
  } catch {
    owner = undefined;
  }
  if ((owner?.kind === 'cluster' || owner?.kind === 'install') && typeof owner.id === 'string' && owner.id !== '') return { kind: owner.kind, id: owner.id };
  throw new Error(`the bucket's ${OWNER_KEY} is not a marker Plinth wrote`);
}

/**
 * Sends a request whose body is a stream (`send` makes a fresh one each call), once more if the
 * bucket refused it because this machine's clock is off: the SDK then corrects its clock offset
 * from the bucket's answer and resends a request it can replay, but a stream is spent. A node
 * whose first request to the bucket is an upload (the ledger skips the question before it) would
 * otherwise fail every upload of the first deploy after a clock jump. A bucket that refuses before
 * reading the body may close the connection on it (`EPIPE`, `ECONNRESET`) before the client reads
 * the refusal: `checkClock` then asks the bucket's time another way (true when it corrected it).
 */
async function resendIfClockCorrected<T>(send: () => Promise<T>, checkClock?: () => Promise<boolean>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!isClockSkewRefusal(err) && !(isCutOff(err) && (await checkClock?.()))) throw err;
    return await send();
  }
}

function isCutOff(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'EPIPE' || code === 'ECONNRESET';
}

function isClockSkewRefusal(err: unknown): boolean {
  const failure = err as { name?: string; Code?: string; $metadata?: { clockSkewCorrected?: boolean } };
  return failure.$metadata?.clockSkewCorrected === true || failure.name === 'RequestTimeTooSkewed' || failure.Code === 'RequestTimeTooSkewed';
}

/** A body whose stream fails mid-way (a reset connection) fails as the bucket being unavailable. */
async function* mapErrors(body: AsyncIterable<Uint8Array>, key: string, counted: (err: Error) => Error): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (err) {
    throw counted(bucketError(err, key));
  }
}

/**
 * A missing object (404, `NoSuchKey`) is `NOT_IN_BUCKET`; anything else the bucket did or did not
 * answer (no connection, a timeout, a 5xx, denied credentials) is `BUCKET_UNAVAILABLE`, which
 * clients see as `503` with `Retry-After`.
 */
function bucketError(err: unknown, key: string): Error {
  const failure = err as { name?: string; $metadata?: { httpStatusCode?: number }; code?: string };
  if (failure.code === BUCKET_UNAVAILABLE_CODE || failure.code === NOT_IN_BUCKET) return err as Error;
  const status = failure.$metadata?.httpStatusCode;
  if (status === 404 || failure.name === 'NotFound' || failure.name === 'NoSuchKey') {
    return Object.assign(new Error(`the bucket has no object ${key}`, { cause: err }), { code: NOT_IN_BUCKET });
  }
  const reason = status !== undefined ? `HTTP ${status}` : (failure.code ?? failure.name ?? 'error');
  return Object.assign(new Error(`the blob bucket could not be reached for ${key} (${reason})`, { cause: err }), { code: BUCKET_UNAVAILABLE_CODE });
}

/** A gate that runs the tasks given to it at most `limit` at once, in the order given. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finished task hands its slot to the next one waiting, so none can jump the queue.
    if (active < limit) active++;
    else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await task();
    } finally {
      const next = queue.shift();
      if (next !== undefined) next();
      else active--;
    }
  };
}

/** Runs `task` over `items`, at most `limit` at once; rejects with the first failure once none run. */
export async function forEachLimit<T>(items: Iterable<T>, limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done && failure === undefined; next = iterator.next()) {
      try {
        await task(next.value);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  if (failure !== undefined) throw failure.err;
}
