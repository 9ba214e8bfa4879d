import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody, tarFromEntries, tarGzDeclaring, tarGzWithTool, writeTree, zipFromEntries, zipWithTool } from '../fixtures/archives.js';
import { createIngestRig, expectError, expectOk, MB, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-limits-');
});
afterAll(() => rig.close());

const PAGE = '<!doctype html><title>x</title>\n';
const limits = { maxFiles: 5, maxFileBytes: 1 * MB, maxSiteBytes: 2 * MB };

function site(files: Record<string, string | Uint8Array>): string {
  const dir = rig.file('site');
  writeTree(dir, { 'index.html': PAGE, ...files });
  return dir;
}

// Incompressible-ish filler of an exact size, so gzip does not hide the size from anyone.
function filler(bytes: number, seed: number): Buffer {
  const buf = Buffer.alloc(bytes);
  let x = seed;
  for (let i = 0; i < bytes; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    buf[i] = 0x20 + ((x >>> 16) % 90);
  }
  return buf;
}

describe('tier limits (SPEC 8), counted while streaming', () => {
  it('accepts files and a site exactly at the limits', async () => {
    const dir = site({ 'a.txt': filler(1 * MB, 1), 'b.txt': filler(1 * MB - PAGE.length, 2), 'c.txt': '', 'd.txt': '' });
    const result = expectOk(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')), { limits }));
    expect(result.files).toHaveLength(5);
  });

  it('refuses more files than the tier allows', async () => {
    const dir = site(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`p${i}.html`, PAGE])));
    const error = expectError(await rig.unpack(zipWithTool(dir, rig.file('site.zip')), { limits }));
    expect(error).toMatchObject({ code: 'too_large', details: { limit: 5 } });
    expect(error.message).toContain('more than 5 files');
    expect(error.agentMessage).toContain('5 files');
  });

  it('does not count skipped files against the file limit', async () => {
    const dir = site(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`node_modules/m${i}.js`, 'x'])));
    expect(expectOk(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')), { limits })).skipped).toEqual(['node_modules/']);
  });

  it('refuses a file one byte over the per-file limit, naming the file and the limit in MB', async () => {
    const dir = site({ 'video/big.mp4': filler(1 * MB + 1, 3) });
    const error = expectError(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')), { limits }));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'video/big.mp4', limit: 1 * MB } });
    expect(error.agentMessage).toContain('video/big.mp4');
    expect(error.agentMessage).toContain('1 MB');
  });

  it('refuses a site over the per-site limit', async () => {
    const dir = site({ 'a.bin': filler(900_000, 4), 'b.bin': filler(900_000, 5), 'c.bin': filler(900_000, 6) });
    const error = expectError(await rig.unpack(zipWithTool(dir, rig.file('site.zip')), { limits }));
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('the limit per site is 2 MB');
    expect(error.agentMessage).toContain('2 MB');
  });

  it('names the largest files of a site over the limit, not the small one where the total crossed it, and what would fit', async () => {
    // Archive order: two big bundles, then a small page that takes the total over 2 MB.
    const archive = await tarFromEntries(rig.file('site.tgz'), [
      { name: 'index.html', content: PAGE },
      { name: 'assets/app.js', content: filler(1_000_000, 7) },
      { name: 'assets/vendor.js', content: filler(900_000, 8) },
      { name: 'about.html', content: filler(300_000, 9) },
      { name: 'logo.svg', content: '<svg/>' },
    ]);
    const error = expectError(await rig.unpack(archive, { limits }));
    expect(error.code).toBe('too_large');
    expect(error.details).toMatchObject({
      file: 'assets/app.js',
      limit: 2 * MB,
      total: 2_200_000 + PAGE.length + 6,
      largest: [
        { file: 'assets/app.js', size: 1_000_000 },
        { file: 'assets/vendor.js', size: 900_000 },
        { file: 'about.html', size: 300_000 },
        { file: 'index.html', size: PAGE.length },
        { file: 'logo.svg', size: 6 },
      ],
    });
    expect(error.message).toBe("The site's files add up to 2.1 MB; the limit per site is 2 MB.");
    expect(error.agentMessage).toContain('The largest files: assets/app.js (977 KB), assets/vendor.js (879 KB), about.html (293 KB)');
    expect(error.agentMessage).toContain('Without assets/app.js it would be 1.1 MB, which fits.');
    expect(error.agentMessage).not.toContain('about.html is');
    expect(error.agentMessage).not.toMatch(/image/i);
    expect(error.agentMessage).toMatch(/minified bundles without source maps/);
    expect(error.agentMessage).not.toMatch(/create an account/);
  });

  it('tells a deploy without an account to create one, not to upgrade a plan', async () => {
    const dir = site({ 'a.png': filler(1_000_000, 10), 'b.jpg': filler(1_000_000, 11), 'c.png': filler(200_000, 12) });
    const error = expectError(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')), { limits, blockExecutables: true }));
    expect(error.code).toBe('too_large');
    expect(error.agentMessage).toContain('create an account');
    expect(error.agentMessage).toContain('a free account allows 5 MB per site');
    expect(error.agentMessage).not.toMatch(/upgrade/i);
    expect(error.agentMessage).toMatch(/Compress or resize the large images/);
  });

  it('applies the limits to inline JSON', async () => {
    const big = jsonBody(rig.file('big.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'big.txt', content: 'x'.repeat(1 * MB + 1) },
      ],
    });
    expect(expectError(await rig.unpack(big, { bodyKind: 'json', limits }))).toMatchObject({ code: 'too_large', details: { file: 'big.txt' } });
    const many = jsonBody(rig.file('many.json'), { files: Array.from({ length: 6 }, (_, i) => ({ path: `p${i}.html`, content: PAGE })) });
    expect(expectError(await rig.unpack(many, { bodyKind: 'json', limits })).code).toBe('too_large');
  });
});

describe('bombs', () => {
  it('stops a tar entry whose header declares 10 GB at the per-file limit', async () => {
    // 64 MB of zeros really follow the header (cheap once gzipped); the limit is 1 MB.
    const archive = await tarGzDeclaring(rig.file('huge.tgz'), 'huge.bin', 10 * 1024 * MB, 64 * MB);
    const before = rig.blobBytes();
    const error = expectError(await rig.unpack(archive, { limits }));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'huge.bin' } });
    expect(rig.blobBytes() - before).toBeLessThan(64 * 1024);
  });

  it('stops a gzip bomb inside a tar at the per-file limit', async () => {
    const archive = await tarFromEntries(rig.file('bomb.tgz'), [
      { name: 'index.html', content: PAGE },
      { name: 'zeros.txt', content: Buffer.alloc(100 * MB) },
    ]);
    const error = expectError(await rig.unpack(archive, { limits }));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'zeros.txt' } });
  });

  it('stops a zip bomb (200 MB of zeros) at the per-file limit, without writing it', async () => {
    const zip = await zipFromEntries(rig.file('bomb.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'zeros.bin', zeros: 200 * MB },
    ]);
    const before = rig.blobBytes();
    const error = expectError(await rig.unpack(zip, { limits: { maxFiles: 100, maxFileBytes: 10 * MB, maxSiteBytes: 50 * MB } }));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'zeros.bin' } });
    expect(rig.blobBytes() - before).toBeLessThan(64 * 1024);
  });

  it('stops a zip entry that inflates past its declared size', async () => {
    const zip = await zipFromEntries(rig.file('liar.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'small.txt', zeros: 200 * MB, declaredSize: 1000 },
    ]);
    const error = expectError(await rig.unpack(zip, { limits }));
    expect(['bad_request', 'too_large']).toContain(error.code);
  });

  it('stops many entries that each stay under the file limit at the site limit', async () => {
    const zip = await zipFromEntries(rig.file('wide.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      ...Array.from({ length: 4 }, (_, i) => ({ name: `z${i}.bin`, zeros: 1 * MB - 1 })),
    ]);
    const error = expectError(await rig.unpack(zip, { limits }));
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('the limit per site is 2 MB');
  });
});
