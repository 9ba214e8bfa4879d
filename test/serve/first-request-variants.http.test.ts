import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, type FileEntry } from '../../src/store/index.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';

/**
 * A deploy's text files are live before their variants are recorded (its compressor makes them
 * right after the answer). Until then a serving thread makes the gzip variant from the blob, by
 * the compressor's rule, so the first visitors get it compressed with the bytes and ETag the
 * stored variant will have. Here the revision is committed with no variants and no compressor
 * runs, so every answer before `compress` below is one made on demand.
 */

const PASSWORD = 'on demand secret';
const css = '.rule { margin: 0 auto; padding: 1rem; }\n'.repeat(200);
// Past what a serving thread compresses at once (32 KB): made off the thread, the request waits for it.
const bigCss = Array.from({ length: 4000 }, (_, i) => `.c${i} { color: #${((i * 2654435761) >>> 0).toString(16).slice(-6)}; }`).join('\n');
// A text type whose bytes do not compress: the compressor keeps no variant, nor does serving.
const noise = randomBytes(6000).toString('latin1');
// Asked for by several visitors at once, before anyone else.
const sharedJs = Array.from({ length: 3000 }, (_, i) => `export const v${i} = ${i * 7};`).join('\n');
const FILES: Record<string, string> = { 'site.css': css, 'big.css': bigCss, 'noise.txt': noise, 'tiny.css': 'a{}' };

const server = useTestServer({ PLINTH_SITE_PASSWORD_HASHES: '0' });
const sites: Record<string, { revision: string; files: Map<string, FileEntry> }> = {};

const get = (site: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
  request({ port: server.port, host: `${site}.sites.localhost`, path, headers, method });
const gzipped = { 'accept-encoding': 'br, gzip' };

/** Commits the files as a deploy with no variants recorded (the compressor has not run). */
async function publishUncompressed(name: string, extra: Record<string, string> = {}): Promise<void> {
  const bytes = Object.fromEntries(Object.entries({ ...FILES, ...extra }).map(([path, text]) => [path, Buffer.from(text, 'latin1')]));
  sites[name] = await publishSite(server.store, name, bytes, {}, { compress: false });
}

/** What the compressor after the answer does: the variants at quality 'fast', then their record. */
async function compress(name: string): Promise<void> {
  const { revision, files } = sites[name]!;
  const made = new Map<string, Partial<Record<'br' | 'gzip', number>>>();
  for (const entry of files.values()) made.set(entry.sha256, await server.store.blobs.compressBlob(entry.sha256, { quality: 'fast' }));
  await server.store.recordEncodings(revision, made);
}

beforeAll(async () => {
  await publishUncompressed('fresh-site', { 'shared.js': sharedJs });
  await publishUncompressed('private-site');
  const site = server.store.getSite('private-site')!;
  await server.store.changeSiteAccess(site.id, { access: { mode: 'password', passwordHash: await hashPassword(PASSWORD), since: Date.now() } });
});

describe('a text file whose variants are not recorded yet', () => {
  const first: Record<string, { etag: string; body: Buffer }> = {};

  it.each(['/site.css', '/big.css'])('%s is served gzip from its first request, decoding to the file', async (path) => {
    const res = await get('fresh-site', path, gzipped);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toBe('Accept-Encoding');
    const file = sites['fresh-site']!.files.get(path.slice(1))!;
    expect(res.headers.etag).toBe(`"${file.sha256}-gzip"`);
    expect(gunzipSync(res.body).toString('latin1')).toBe(FILES[path.slice(1)]);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    first[path] = { etag: res.headers.etag!, body: res.body };
    // Asked again (held by the thread now), the same bytes; and a revalidation gets a 304.
    expect((await get('fresh-site', path, gzipped)).body.equals(res.body)).toBe(true);
    expect((await get('fresh-site', path, { ...gzipped, 'if-none-match': res.headers.etag! })).status).toBe(304);
  });

  it("makes a large file's variant once for visitors who ask at once, and answers them alike", async () => {
    const before = server.stats().cache.variantsMadeOnDemand;
    const answers = await Promise.all(Array.from({ length: 6 }, () => get('fresh-site', '/shared.js', gzipped)));
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.body.equals(answers[0]!.body)).toBe(true);
    }
    expect(gunzipSync(answers[0]!.body).toString()).toBe(sharedJs);
    expect(server.stats().cache.variantsMadeOnDemand - before).toBe(1);
  });

  it('gives a HEAD the headers of the GET, with the made variant size', async () => {
    const get1 = await get('fresh-site', '/site.css', gzipped);
    const head = await get('fresh-site', '/site.css', gzipped, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers.etag).toBe(get1.headers.etag);
    expect(head.headers['content-length']).toBe(String(get1.body.length));
  });

  it('serves a byte range of the identity bytes, never of a variant', async () => {
    const res = await get('fresh-site', '/site.css', { ...gzipped, range: 'bytes=0-9' });
    expect(res.status).toBe(206);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-range']).toBe(`bytes 0-9/${css.length}`);
    expect(res.text).toBe(css.slice(0, 10));
  });

  it('serves the plain bytes to a client that takes no gzip, and of a file whose variant would not pay', async () => {
    const plain = await get('fresh-site', '/site.css', { 'accept-encoding': 'br' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.text).toBe(css);
    for (const path of ['/noise.txt', '/tiny.css']) {
      const res = await get('fresh-site', path, gzipped);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body.toString('latin1')).toBe(FILES[path.slice(1)]);
    }
  });

  it('keeps a private site private: refused without the password, gzip and private headers with it', async () => {
    const refused = await get('private-site', '/site.css', gzipped);
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain('.rule');
    const res = await get('private-site', '/site.css', { ...gzipped, ...basic(PASSWORD) });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['x-robots-tag']).toBe('noindex');
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    expect(gunzipSync(res.body).toString()).toBe(css);
  });

  it('has the bytes and ETag of the variant the compressor stores after the answer', async () => {
    await compress('fresh-site');
    const recorded = server.store.getFile(sites['fresh-site']!.revision, 'site.css')!;
    expect(recorded.encodings?.gzip).toBeDefined();
    for (const path of ['/site.css', '/big.css']) {
      const res = await get('fresh-site', path, { 'accept-encoding': 'gzip' });
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.headers.etag).toBe(first[path]!.etag);
      expect(res.body.equals(first[path]!.body)).toBe(true);
    }
    // Brotli, once stored, is preferred as before.
    expect((await get('fresh-site', '/site.css', gzipped)).headers['content-encoding']).toBe('br');
    // Nothing was kept for the file that does not compress.
    expect(server.store.getFile(sites['fresh-site']!.revision, 'noise.txt')!.encodings).toBeUndefined();
  });
});

function basic(password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`anyone:${password}`).toString('base64')}` };
}
