import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyZip, gzipOf, jsonBody, tarFromEntries, tarGzWithTool, tarWithTool, writeTree, zipFromEntries, zipWithTool } from '../fixtures/archives.js';
import { createIngestRig, expectError, expectOk, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-formats-');
});
afterAll(() => rig.close());

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

const PAGE = `<!doctype html>\n<title>Home</title>\n${'<p>Hello from the site, with enough text to compress.</p>\n'.repeat(40)}`;
const STYLE = 'body { margin: 0 }\n';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 7)]);

function siteDir(files: Record<string, string | Uint8Array> = { 'index.html': PAGE, 'css/site.css': STYLE, 'img/logo.png': PNG }): string {
  const dir = rig.file('site');
  writeTree(dir, files);
  return dir;
}

function byPath(files: { path: string }[]): string[] {
  return files.map((f) => f.path).sort();
}

describe('archive formats', () => {
  it.each([
    ['.tar.gz made by tar', (dir: string) => tarGzWithTool(dir, rig.file('site.tgz'))],
    ['.tar made by tar', (dir: string) => tarWithTool(dir, rig.file('site.tar'))],
    ['.zip made by zip', (dir: string) => zipWithTool(dir, rig.file('site.zip'))],
  ])('publishes a %s', async (_name, build) => {
    const result = expectOk(await rig.unpack(build(siteDir())));
    expect(byPath(result.files)).toEqual(['css/site.css', 'img/logo.png', 'index.html']);
    expect(result.strippedPrefix).toBeUndefined();
    const index = result.files.find((f) => f.path === 'index.html')!;
    expect(index).toMatchObject({ sha256: sha256(PAGE), size: Buffer.byteLength(PAGE), type: 'text/html; charset=utf-8' });
    const png = result.files.find((f) => f.path === 'img/logo.png')!;
    expect(png).toEqual({ path: 'img/logo.png', sha256: sha256(PNG), size: PNG.byteLength, type: 'image/png' });
  });

  it('stores blobs under their hash and leaves compression of files of 1 KB or more for after the commit', async () => {
    const result = expectOk(await rig.unpack(tarGzWithTool(siteDir(), rig.file('site.tgz'))));
    const index = result.files.find((f) => f.path === 'index.html')!;
    const blobs = join(rig.dataDir, 'blobs', index.sha256.slice(0, 2), index.sha256);
    expect(readFileSync(blobs, 'utf8')).toBe(PAGE);
    // Under 1 KB, and images: no variants wanted.
    expect(result.pendingVariants).toEqual([index.sha256]);

    const { sizes: made, bytes } = await rig.pool.compress({ dataDir: rig.dataDir, sha256s: result.pendingVariants, variantBytesMax: 1024 * 1024 });
    expect(made[index.sha256]?.br).toBeGreaterThan(0);
    expect(made[index.sha256]?.gzip).toBeGreaterThan(0);
    expect(brotliDecompressSync(readFileSync(`${blobs}.br`)).toString()).toBe(PAGE);
    expect(gunzipSync(readFileSync(`${blobs}.gz`)).toString()).toBe(PAGE);
    // The bytes of the variants it made came back with their sizes, as their files hold them.
    expect(bytes?.map(([sha, encoding]) => `${sha}.${encoding}`).sort()).toEqual([`${index.sha256}.br`, `${index.sha256}.gzip`]);
    for (const [, encoding, variant] of bytes!) {
      expect(Buffer.from(variant).equals(readFileSync(`${blobs}.${encoding === 'br' ? 'br' : 'gz'}`))).toBe(true);
    }

    // Deployed again, the variants exist and come with the entry.
    const again = expectOk(await rig.unpack(tarGzWithTool(siteDir(), rig.file('site.tgz'))));
    expect(again.files.find((f) => f.path === 'index.html')!.encodings).toEqual(made[index.sha256]);
    expect(again.pendingVariants).toEqual([]);
  });

  it('returns the same entries when the same files are deployed again (blobs are reused)', async () => {
    const archive = tarGzWithTool(siteDir(), rig.file('site.tgz'));
    const first = expectOk(await rig.unpack(archive));
    const count = rig.blobFiles().length;
    const second = expectOk(await rig.unpack(archive));
    expect(second.files).toEqual(first.files);
    expect(rig.blobFiles()).toHaveLength(count);
  });

  it('publishes inline JSON files in utf8 and base64', async () => {
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'img/logo.png', content: PNG.toString('base64'), encoding: 'base64' },
        { path: 'notes.txt', content: 'héllo ✓', encoding: 'utf8' },
      ],
    });
    const result = expectOk(await rig.unpack(body, { bodyKind: 'json' }));
    expect(result.files.map((f) => [f.path, f.sha256])).toEqual([
      ['index.html', sha256(PAGE)],
      ['img/logo.png', sha256(PNG)],
      ['notes.txt', sha256('héllo ✓')],
    ]);
    expect(result.json).toEqual({});
  });

  it('accepts base64 wrapped at 76 columns as the base64 tool writes it', async () => {
    const wrapped = PNG.toString('base64').replace(/.{76}/g, '$&\n');
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'a.png', content: wrapped, encoding: 'base64' },
      ],
    });
    const result = expectOk(await rig.unpack(body, { bodyKind: 'json' }));
    expect(result.files[1]!.sha256).toBe(sha256(PNG));
  });

  it('returns the JSON body fields other than files', async () => {
    const body = jsonBody(rig.file('body.json'), {
      site: 'my-site',
      base_revision: 'rev_abc',
      patch: true,
      deleted: ['./old/page.html', 'gone.css'],
      files: [{ path: 'about.html', content: '<p>about</p>' }],
    });
    const result = expectOk(await rig.unpack(body, { bodyKind: 'json' }));
    expect(result.json).toEqual({ site: 'my-site', base_revision: 'rev_abc', patch: true, deleted: ['old/page.html', 'gone.css'] });
    // A patch needs no index.html and is never stripped: the HTTP side merges it into the base.
    expect(result.files.map((f) => f.path)).toEqual(['about.html']);
    expect(result.strippedPrefix).toBeUndefined();
  });

  it('does not strip the folder of a patch whose files share one', async () => {
    const body = jsonBody(rig.file('body.json'), {
      patch: true,
      files: [
        { path: 'blog/a.html', content: 'a' },
        { path: 'blog/b.html', content: 'b' },
      ],
    });
    const result = expectOk(await rig.unpack(body, { bodyKind: 'json' }));
    expect(byPath(result.files)).toEqual(['blog/a.html', 'blog/b.html']);
  });
});

describe('single top-level folder (SPEC 4.1 rule 2)', () => {
  it('strips the folder of `tar czf site.tgz site`', async () => {
    const parent = rig.file('parent');
    writeTree(join(parent, 'my-site'), { 'index.html': PAGE, 'css/site.css': STYLE, '.git/HEAD': 'ref: main\n' });
    const result = expectOk(await rig.unpack(tarGzWithTool(parent, rig.file('site.tgz'), ['my-site'])));
    expect(result.strippedPrefix).toBe('my-site/');
    expect(byPath(result.files)).toEqual(['css/site.css', 'index.html']);
    expect(result.skipped).toEqual(['.git/']);
  });

  it('strips the folder of a zip made by the macOS Finder (with __MACOSX/ next to it)', async () => {
    const zip = await zipFromEntries(rig.file('finder.zip'), [
      { name: 'site/' },
      { name: 'site/index.html', data: Buffer.from(PAGE), method: 'deflate' },
      { name: 'site/.DS_Store', data: Buffer.from([0, 0, 0, 1]) },
      { name: '__MACOSX/site/._index.html', data: Buffer.from([0, 5, 22, 7]) },
    ]);
    const result = expectOk(await rig.unpack(zip));
    expect(result.strippedPrefix).toBe('site/');
    expect(byPath(result.files)).toEqual(['index.html']);
    expect(result.skipped).toEqual(['.DS_Store', '__MACOSX/']);
  });

  it('keeps paths when files sit in more than one top-level folder', async () => {
    const dir = siteDir({ 'a/index.html': PAGE, 'b/x.css': STYLE, 'index.html': PAGE });
    const result = expectOk(await rig.unpack(zipWithTool(dir, rig.file('site.zip'))));
    expect(result.strippedPrefix).toBeUndefined();
    expect(byPath(result.files)).toEqual(['a/index.html', 'b/x.css', 'index.html']);
  });
});

describe('index.html (SPEC 4.1 rule 3)', () => {
  it.each([
    ['no index.html at all', { 'about.html': PAGE }],
    ['index.html only in a subfolder next to other files', { 'docs/index.html': PAGE, 'readme.txt': 'x' }],
    ['Index.html in another letter case', { 'Index.html': PAGE }],
  ])('rejects an archive with %s', async (_name, files) => {
    const error = expectError(await rig.unpack(tarGzWithTool(siteDir(files), rig.file('site.tgz'))));
    expect(error.code).toBe('bad_request');
    expect(error.message).toBe('index.html is required at the root of the site.');
    expect(error.agentMessage).toMatch(/index\.html/);
  });

  it('rejects a full JSON deploy without index.html', async () => {
    const body = jsonBody(rig.file('body.json'), { files: [{ path: 'about.html', content: 'x' }] });
    expect(expectError(await rig.unpack(body, { bodyKind: 'json' })).message).toBe('index.html is required at the root of the site.');
  });
});

describe('skip rules (SPEC 4.1 rule 5)', () => {
  const skippedFiles = {
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/objects/ab/cdef': 'x',
    'node_modules/lib/index.js': 'x',
    'packages/app/node_modules/dep/a.js': 'x',
    '.env': 'SECRET=1',
    '.env.local': 'SECRET=2',
    'js/app.js.map': '{}',
    'certs/server.pem': 'pem',
    'certs/server.key': 'key',
    '.htaccess': 'deny',
    '.cache/x.json': '{}',
    '.DS_Store': 'ds',
    'img/Thumbs.db': 'db',
  };
  const expected = [
    '.git/',
    'node_modules/',
    'packages/app/node_modules/',
    '.env',
    '.env.local',
    'js/app.js.map',
    'certs/server.pem',
    'certs/server.key',
    '.htaccess',
    '.cache/',
    '.DS_Store',
    'img/Thumbs.db',
  ];

  it.each([
    ['tar.gz', (dir: string) => tarGzWithTool(dir, rig.file('site.tgz'))],
    ['zip', (dir: string) => zipWithTool(dir, rig.file('site.zip'))],
  ])('lists every skipped path of a %s in skipped and publishes the rest', async (_name, build) => {
    const dir = siteDir({ 'index.html': PAGE, '.well-known/security.txt': 'Contact: x\n', ...skippedFiles });
    const result = expectOk(await rig.unpack(build(dir)));
    expect(byPath(result.files)).toEqual(['.well-known/security.txt', 'index.html']);
    expect([...result.skipped].sort()).toEqual([...expected].sort());
  });

  it('skips the same paths in inline JSON', async () => {
    const files = Object.entries({ 'index.html': PAGE, ...skippedFiles }).map(([path, content]) => ({ path, content }));
    const result = expectOk(await rig.unpack(jsonBody(rig.file('body.json'), { files }), { bodyKind: 'json' }));
    expect(byPath(result.files)).toEqual(['index.html']);
    expect([...result.skipped].sort()).toEqual([...expected].sort());
  });

  it('does not store skipped files', async () => {
    const marker = `only-in-node-modules-${Date.now()}`;
    const dir = siteDir({ 'index.html': PAGE, 'node_modules/x/secret.js': marker });
    expectOk(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz'))));
    const hash = sha256(marker);
    expect(rig.blobFiles().some((p) => p.includes(hash))).toBe(false);
  });
});

describe('format detection', () => {
  it.each([
    ['random bytes', Buffer.from('this is not an archive at all, just text\n'.repeat(20))],
    ['a PDF', Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(600, 1)])],
    ['a 7z archive', Buffer.concat([Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]), Buffer.alloc(600)])],
  ])('rejects %s, listing the accepted formats', async (_name, bytes) => {
    const path = rig.file('body.bin');
    writeFileSync(path, bytes);
    const error = expectError(await rig.unpack(path));
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('.tar.gz/.tgz, .tar or .zip');
    expect(error.message).toContain('Content-Type: application/json');
  });

  it('rejects an empty body', async () => {
    const path = rig.file('empty');
    writeFileSync(path, '');
    expect(expectError(await rig.unpack(path)).message).toMatch(/^The body is empty\./);
  });

  it('rejects an empty zip', async () => {
    expect(expectError(await rig.unpack(emptyZip(rig.file('empty.zip'))))).toMatchObject({ code: 'bad_request', message: 'The archive is empty.' });
  });

  it('rejects an empty tar', async () => {
    const tar = await tarFromEntries(rig.file('empty.tgz'), []);
    expect(expectError(await rig.unpack(tar))).toMatchObject({ code: 'bad_request', message: 'The archive is empty.' });
  });

  it('rejects a gzip file that does not hold a tar', async () => {
    const error = expectError(await rig.unpack(gzipOf(rig.file('page.html.gz'), Buffer.from(PAGE))));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/gzip-compressed but does not contain a tar archive/);
  });

  it('rejects a truncated .tar.gz', async () => {
    const full = readFileSync(tarGzWithTool(siteDir(), rig.file('site.tgz')));
    const cut = rig.file('cut.tgz');
    writeFileSync(cut, full.subarray(0, Math.floor(full.byteLength / 2)));
    const error = expectError(await rig.unpack(cut));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/damaged or truncated/);
  });

  it('rejects a zip whose central directory is cut off', async () => {
    const full = readFileSync(zipWithTool(siteDir(), rig.file('site.zip')));
    const cut = rig.file('cut.zip');
    writeFileSync(cut, full.subarray(0, full.byteLength - 30));
    expect(expectError(await rig.unpack(cut)).code).toBe('bad_request');
  });

  it('ignores Content-Type and trusts the bytes: a zip sent as archive works whatever its name', async () => {
    const zip = zipWithTool(siteDir(), rig.file('site.tar.gz'));
    expect(expectOk(await rig.unpack(zip)).files).toHaveLength(3);
  });
});

describe('folders', () => {
  it('ignores folder entries, including `./`', async () => {
    const dir = siteDir();
    mkdirSync(join(dir, 'empty-folder'));
    const result = expectOk(await rig.unpack(tarWithTool(dir, rig.file('site.tar'))));
    expect(byPath(result.files)).toEqual(['css/site.css', 'img/logo.png', 'index.html']);
  });

  it('rejects a symlink packed by the real tar tool', async () => {
    const dir = siteDir();
    symlinkSync('/etc/passwd', join(dir, 'passwd.html'));
    const error = expectError(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz'))));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: './passwd.html' } });
    expect(error.message).toContain('symbolic link');
  });

  it('rejects a symlink stored by `zip -y`', async () => {
    const dir = siteDir();
    symlinkSync('../../outside', join(dir, 'link'));
    const error = expectError(await rig.unpack(zipWithTool(dir, rig.file('site.zip'), ['.'], ['-y'])));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: 'link' } });
    expect(error.message).toContain('"link"');
  });
});
