import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createObjectRequests, type ObjectRequests } from '../../src/store/bucket-http.js';

/**
 * The direct client of a deploy's PUTs and HEADs against a bucket on loopback that misbehaves on
 * purpose: what it retries, when it gives up, how it corrects a skewed clock, and that a bucket
 * that never answers costs bounded time.
 */

interface Seen {
  method: string;
  url: string;
  amzDate: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const thing of open.splice(0)) thing.close();
});

/** A loopback server answering request n with `answers[n]` (the last one ever after). */
async function bucket(
  answers: Array<(res: http.ServerResponse, seen: Seen) => void>,
): Promise<{ client: ObjectRequests; seen: Seen[]; clock: { offsetMs: number } }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { method: req.method!, url: req.url!, amzDate: String(req.headers['x-amz-date']), headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(entry);
      answers[Math.min(seen.length, answers.length) - 1]!(res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const clock = { offsetMs: 0 };
  const client = createObjectRequests({
    base: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/plinth-test`),
    region: 'us-east-1',
    credentials: () => Promise.resolve({ accessKeyId: 'id', secretAccessKey: 'secret' }),
    clock,
    connectTimeoutMs: 500,
    idleTimeoutMs: 300,
  });
  open.push(client, { close: () => server.closeAllConnections() }, server);
  return { client, seen, clock };
}

const ok = (res: http.ServerResponse): void => void res.writeHead(200).end();
const signedHeaders = (seen: Seen): string[] => /SignedHeaders=([^,]+)/.exec(String(seen.headers.authorization))![1]!.split(';');
const refuse = (status: number, code: string) => (res: http.ServerResponse) =>
  void res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);

describe('the direct bucket client', () => {
  it('puts the body under the bucket path, signed, and retries a 503 and a dropped connection', async () => {
    const { client, seen } = await bucket([refuse(503, 'SlowDown'), (res) => res.socket!.destroy(), ok]);
    await client.put('blobs/ab/cd/abcd', Buffer.from('hello'));
    expect(seen.map((s) => [s.method, s.url, s.body.toString()])).toEqual(Array(3).fill(['PUT', '/plinth-test/blobs/ab/cd/abcd', 'hello']));
  });

  it('sends a body it has no hash of (a pack, in parts) as UNSIGNED-PAYLOAD with its CRC32, signed; a blob signed by its own sha256', async () => {
    const { client, seen } = await bucket([ok]);
    await client.put('packs/00000000-0000-4000-8000-000000000001', [Buffer.from('hel'), Buffer.from('lo')]);
    const blobSha256 = createHash('sha256').update('hello').digest('hex');
    await client.put(`blobs/2c/${blobSha256}`, Buffer.from('hello'), blobSha256);
    const [pack, blob] = seen as [Seen, Seen];
    expect(pack.body.toString()).toBe('hello');
    expect(pack.headers['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    // CRC32 of "hello" is 0x3610a686, big-endian, base64.
    expect(pack.headers['x-amz-checksum-crc32']).toBe(Buffer.from([0x36, 0x10, 0xa6, 0x86]).toString('base64'));
    expect(pack.headers['x-amz-checksum-crc32']).toBe(Buffer.from(crc32('hello').toString(16).padStart(8, '0'), 'hex').toString('base64'));
    expect(signedHeaders(pack)).toContain('x-amz-checksum-crc32');
    expect(signedHeaders(pack)).toContain('x-amz-content-sha256');
    expect(blob.headers['x-amz-content-sha256']).toBe(blobSha256);
    expect(blob.headers['x-amz-checksum-crc32']).toBeUndefined();
  });

  it('gives up after three attempts, shaped as the SDK fails (name, status)', async () => {
    const { client, seen } = await bucket([refuse(500, 'InternalError')]);
    await expect(client.put('blobs/ab/cd/abcd', Buffer.from('x'))).rejects.toMatchObject({ name: 'InternalError', $metadata: { httpStatusCode: 500 } });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a refusal that will not change (403 AccessDenied), and names a missing object NotFound', async () => {
    const denied = await bucket([refuse(403, 'AccessDenied')]);
    await expect(denied.client.put('blobs/ab/cd/abcd', Buffer.from('x'))).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(denied.seen).toHaveLength(1);
    const missing = await bucket([(res) => void res.writeHead(404).end()]);
    await expect(missing.client.head('blobs/ab/cd/abcd')).rejects.toMatchObject({ name: 'NotFound', $metadata: { httpStatusCode: 404 } });
    expect(missing.seen).toHaveLength(1);
  });

  it('learns the offset from the Date of a refusal while its clock is days off, and resends signed with the corrected time', async () => {
    const skewed = (res: http.ServerResponse): void => void res.writeHead(403, { date: new Date().toUTCString() }).end();
    const { client, seen, clock } = await bucket([
      skewed,
      (res) => void res.writeHead(200, { 'content-length': '42', 'last-modified': new Date(0).toUTCString(), 'x-amz-meta-plinth-touched-ms': '7' }).end(),
    ]);
    clock.offsetMs = -4 * 24 * 3600_000;
    const found = await client.head('blobs/ab/cd/abcd');
    expect(found).toEqual({ size: 42, lastModifiedMs: 0, metadata: { 'plinth-touched-ms': '7' } });
    expect(seen).toHaveLength(2);
    expect(Math.abs(clock.offsetMs)).toBeLessThan(5000);
    const signedAt = (s: Seen): number => Date.parse(s.amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    expect(Date.now() - signedAt(seen[0]!)).toBeGreaterThan(3 * 24 * 3600_000);
    expect(Math.abs(Date.now() - signedAt(seen[1]!))).toBeLessThan(60_000);
  });

  it('bounds a bucket that takes the request and never answers: three idle bounds and the backoff', async () => {
    const { client, seen } = await bucket([() => undefined]);
    const started = Date.now();
    await expect(client.put('blobs/ab/cd/abcd', Buffer.from('x'))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect(seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(3 * 300 + 600 + 1000);
  });
});
