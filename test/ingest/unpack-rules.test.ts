import { randomInt } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody, tarFromEntries, tarGzWithTool, writeTree, zipFromEntries, zipWithTool, type TarEntrySpec } from '../fixtures/archives.js';
import { createIngestRig, expectError, expectOk, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-rules-');
});
afterAll(() => rig.close());

const PAGE = '<!doctype html><title>x</title>\n';

// Keys are assembled at run time so this file holds no key-shaped literal.
function randomChars(length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}
const awsKeyId = () => `${'AK'}${'IA'}${randomChars(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`;
const privateKeyBlock = () => {
  const dashes = '-'.repeat(5);
  const body = Array.from({ length: 4 }, () => randomChars(64, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')).join('\n');
  return { text: `${dashes}BEGIN RSA ${'PRIVATE'} KEY${dashes}\n${body}\n${dashes}END RSA PRIVATE KEY${dashes}\n`, body };
};

const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(5000, 0)]);
const PE = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(62, 0), Buffer.from('PE\0\0'), Buffer.alloc(5000, 1)]);

function tarWith(entries: TarEntrySpec[]): Promise<string> {
  return tarFromEntries(rig.file('site.tgz'), [{ name: 'index.html', content: PAGE }, ...entries]);
}

describe('entries that fail the whole deploy (SPEC 4.1 rule 4)', () => {
  it.each<[string, TarEntrySpec, RegExp]>([
    ['a symlink', { name: 'docs/link.html', type: 'symlink', linkname: '/etc/passwd' }, /symbolic link/],
    ['a hard link', { name: 'copy.html', type: 'link', linkname: 'index.html' }, /hard link/],
    ['a character device', { name: 'dev/null', type: 'character-device' }, /device/],
    ['a block device', { name: 'dev/sda', type: 'block-device' }, /device/],
    ['a FIFO', { name: 'pipe', type: 'fifo' }, /named pipe/],
  ])('rejects a tar with %s, naming it', async (_name, entry, pattern) => {
    const error = expectError(await rig.unpack(await tarWith([entry])));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(pattern);
    expect(error.message).toContain(JSON.stringify(entry.name));
    expect(error.details).toEqual({ file: entry.name });
  });

  it.each([
    ['../x.html', /climbs out/],
    ['a/../../x.html', /climbs out/],
    ['/etc/passwd', /absolute/],
    ['C:\\Windows\\x.html', /drive letter/],
    ['C:/x.html', /drive letter/],
    ['\\\\server\\share\\x', /UNC/],
    ['..\\x.html', /climbs out/],
    ['dir\\x.html', /backslash/],
    ['a\nb.html', /control character/],
  ])('rejects a tar entry named %j, naming it', async (name, pattern) => {
    const error = expectError(await rig.unpack(await tarWith([{ name, content: 'x' }])));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(pattern);
    expect(error.details).toEqual({ file: name });
  });

  it('rejects a folder entry that climbs out, even though folders create nothing', async () => {
    const error = expectError(await rig.unpack(await tarWith([{ name: '../outside/', type: 'directory' }])));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: '../outside/' } });
  });

  it.each([
    ['../evil.html', /climbs out/],
    ['/abs/evil.html', /absolute/],
    ['C:\\evil.html', /drive letter/],
    ['a/../../evil.html', /climbs out/],
  ])('rejects a zip entry named %j', async (name, pattern) => {
    const zip = await zipFromEntries(rig.file('evil.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name, data: Buffer.from('x') },
    ]);
    const error = expectError(await rig.unpack(zip));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(pattern);
    expect(error.details).toEqual({ file: name });
  });

  it.each([
    ['a symlink', 0o120777, /symbolic link/],
    ['a character device', 0o020644, /device/],
    ['a block device', 0o060644, /device/],
    ['a FIFO', 0o010644, /named pipe/],
    ['a socket', 0o140755, /not a regular file/],
  ])('rejects a zip entry whose unix mode makes it %s', async (_name, unixMode, pattern) => {
    const zip = await zipFromEntries(rig.file('link.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'assets/thing', data: Buffer.from('/etc/shadow'), unixMode },
    ]);
    const error = expectError(await rig.unpack(zip));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: 'assets/thing' } });
    expect(error.message).toMatch(pattern);
  });

  it('rejects the same path twice in a tar', async () => {
    const error = expectError(
      await rig.unpack(
        await tarWith([
          { name: 'a.html', content: '1' },
          { name: './a.html', content: '2' },
        ]),
      ),
    );
    expect(error).toMatchObject({ code: 'bad_request', details: { file: 'a.html' } });
    expect(error.message).toContain('"a.html" appears more than once');
  });

  it('rejects paths that differ only in letter case, naming both', async () => {
    const zip = await zipFromEntries(rig.file('case.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'About.html', data: Buffer.from('1') },
      { name: 'about.html', data: Buffer.from('2') },
    ]);
    const error = expectError(await rig.unpack(zip));
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('"About.html"');
    expect(error.message).toContain('"about.html"');
    expect(error.details).toEqual({ file: 'about.html', other: 'About.html' });
  });

  it('rejects case duplicates in inline JSON', async () => {
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'IMG/a.png', content: '' },
        { path: 'img/A.PNG', content: '' },
      ],
    });
    expect(expectError(await rig.unpack(body, { bodyKind: 'json' })).message).toMatch(/differ only in letter case/);
  });

  it('rejects a path that is both a file and a folder', async () => {
    const error = expectError(
      await rig.unpack(
        await tarWith([
          { name: 'docs', content: 'x' },
          { name: 'docs/a.html', content: 'y' },
        ]),
      ),
    );
    expect(error).toMatchObject({ code: 'bad_request', details: { file: 'docs', other: 'docs/a.html' } });
  });

  it('rejects encrypted zip entries', async () => {
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE });
    const zip = rig.file('locked.zip');
    const { execFileSync } = await import('node:child_process');
    execFileSync('zip', ['-q', '-P', 'secret', zip, 'index.html'], { cwd: dir });
    const error = expectError(await rig.unpack(zip));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: 'index.html' } });
    expect(error.message).toMatch(/encrypted/);
  });
});

describe('zip entries whose local header disagrees with the central directory', () => {
  // Readers that stream local headers and readers that use the central directory would see
  // different files; the archive is refused instead of published as one reading of it.
  it.each([
    ['another name', { localName: '../../evil.html' }, /on the name/],
    ['a name of another length', { localName: 'about.htm' }, /on the name/],
    ['another compression method', { localMethod: 8 }, /on the compression method/],
  ])('rejects an entry whose local header gives %s', async (_what, local, pattern) => {
    const zip = await zipFromEntries(rig.file('mismatch.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'about.html', data: Buffer.from('<p>about</p>'), ...local },
    ]);
    const error = expectError(await rig.unpack(zip));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(pattern);
    expect(error.message).toContain('"about.html"');
  });

  it('accepts local sizes left zero, as `zip` writing to a pipe does (data descriptors)', async () => {
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE, 'about.html': '<p>about</p>' });
    const zip = rig.file('piped.zip');
    const { execFileSync } = await import('node:child_process');
    writeFileSync(zip, execFileSync('sh', ['-c', 'zip -q - index.html about.html | cat'], { cwd: dir }));
    expect(readFileSync(zip).readUInt16LE(6) & 0x8).toBe(0x8);
    expect(
      expectOk(await rig.unpack(zip))
        .files.map((file) => file.path)
        .sort(),
    ).toEqual(['about.html', 'index.html']);
  });
});

describe('leak guard (SPEC 4.1 rule 6)', () => {
  it('refuses a tar.gz with an AWS key, with file and line, never echoing the key', async () => {
    const key = awsKeyId();
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE, 'js/config.js': `// config\nconst region = 'eu-west-1';\nconst id = '${key}';\n` });
    const result = await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')));
    const error = expectError(result);
    expect(error).toMatchObject({ code: 'blocked_secret', details: { file: 'js/config.js', line: 3, kind: 'aws-access-key-id' } });
    expect(error.agentMessage).toMatch(/js\/config\.js line 3/);
    expect(error.agentMessage).toMatch(/environment variables|server-side/);
    expect(JSON.stringify(result)).not.toContain(key);
  });

  it('reports every key of every file in one answer, the first also at the top of details', async () => {
    const keys = [awsKeyId(), awsKeyId(), awsKeyId()];
    const pem = privateKeyBlock();
    const result = await rig.unpack(
      await tarFromEntries(rig.file('site.tgz'), [
        { name: 'index.html', content: PAGE },
        { name: 'js/a.js', content: `// a\nconst one = '${keys[0]}';\nconst two = '${keys[1]}';\n` },
        { name: 'js/b.js', content: `const three = '${keys[2]}';\n` },
        { name: 'notes/deploy.txt', content: `notes\n${pem.text}` },
      ]),
    );
    const error = expectError(result);
    expect(error).toMatchObject({
      code: 'blocked_secret',
      details: {
        file: 'js/a.js',
        line: 2,
        kind: 'aws-access-key-id',
        findings: [
          { file: 'js/a.js', line: 2, kind: 'aws-access-key-id' },
          { file: 'js/a.js', line: 3, kind: 'aws-access-key-id' },
          { file: 'js/b.js', line: 1, kind: 'aws-access-key-id' },
          { file: 'notes/deploy.txt', line: 2, kind: 'private-key' },
        ],
      },
    });
    expect(error.message).toBe(
      '4 secret keys found in 3 files: js/a.js line 2 (aws-access-key-id), line 3 (aws-access-key-id); js/b.js line 1 (aws-access-key-id); notes/deploy.txt line 2 (private-key). Nothing was published.',
    );
    expect(error.agentMessage).toContain('js/b.js line 1 (aws-access-key-id)');
    expect(error.agentMessage).toContain('notes/deploy.txt line 2 (private-key)');
    for (const key of keys) expect(JSON.stringify(result)).not.toContain(key);
  });

  it('lists at most 50 findings and says the rest of the site needs checking too', async () => {
    const lines = Array.from({ length: 60 }, () => `k = '${awsKeyId()}'`).join('\n');
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'keys.txt', content: lines },
      ],
    });
    const error = expectError(await rig.unpack(body, { bodyKind: 'json' }));
    const findings = (error.details as { findings: unknown[] }).findings;
    expect(findings).toHaveLength(50);
    expect(findings[49]).toEqual({ file: 'keys.txt', line: 50, kind: 'aws-access-key-id' });
    expect(error.agentMessage).toContain('only the first 50 are listed');
  });

  it('refuses a private key block in a zip', async () => {
    const pem = privateKeyBlock();
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE, 'notes/deploy.txt': `deploy notes\n\n${pem.text}` });
    const result = await rig.unpack(zipWithTool(dir, rig.file('site.zip')));
    expect(expectError(result)).toMatchObject({ code: 'blocked_secret', details: { file: 'notes/deploy.txt', line: 3, kind: 'private-key' } });
    expect(JSON.stringify(result)).not.toContain(pem.body.slice(0, 40));
  });

  it('refuses a secret in inline JSON content', async () => {
    const key = awsKeyId();
    const body = jsonBody(rig.file('body.json'), { files: [{ path: 'index.html', content: `<script>\nvar k = "${key}";\n</script>` }] });
    const result = await rig.unpack(body, { bodyKind: 'json' });
    expect(expectError(result)).toMatchObject({ code: 'blocked_secret', details: { file: 'index.html', line: 2 } });
    expect(JSON.stringify(result)).not.toContain(key);
  });

  it('refuses a secret in base64 inline content once decoded', async () => {
    const key = awsKeyId();
    const content = Buffer.from(`a\nb\nc\nkey=${key}\n`).toString('base64');
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'env.txt', content, encoding: 'base64' },
      ],
    });
    const result = await rig.unpack(body, { bodyKind: 'json' });
    expect(expectError(result)).toMatchObject({ code: 'blocked_secret', details: { file: 'env.txt', line: 4 } });
    expect(JSON.stringify(result)).not.toContain(key);
  });

  it('does not scan skipped files (they are never published)', async () => {
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE, '.env': `AWS_KEY=${awsKeyId()}\n` });
    expect(expectOk(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')))).skipped).toEqual(['.env']);
  });

  it('publishes placeholders and public browser keys', async () => {
    const dir = rig.file('site');
    writeTree(dir, {
      'index.html': `${PAGE}<script>var stripe = "pk_live_${randomChars(24, 'abcdefghijklmnopqrstuvwxyz0123456789')}";\nvar demo = "sk_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxx";</script>`,
    });
    expectOk(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz'))));
  });
});

describe('executables (SPEC 4.1 rule 7)', () => {
  it.each([
    ['an ELF binary with an innocent name', 'assets/photo.jpg', ELF],
    ['a Windows PE binary', 'download/tool.bin', PE],
    ['an installer by its name', 'setup.exe', Buffer.from('not really an exe')],
    ['a script by its name', 'run.ps1', Buffer.from('Write-Host hi')],
  ])('blocks %s on an anonymous deploy, saying an account can publish it', async (_name, path, bytes) => {
    const tar = await tarWith([{ name: path, content: bytes }]);
    const error = expectError(await rig.unpack(tar, { blockExecutables: true }));
    expect(error).toMatchObject({ code: 'bad_request', details: { file: path } });
    expect(error.agentMessage).toMatch(/Sign in/);
    expect(error.agentMessage).toContain(path);
  });

  it('publishes the same files when the deploy has an account', async () => {
    const tar = await tarWith([
      { name: 'assets/photo.jpg', content: ELF },
      { name: 'setup.exe', content: PE },
    ]);
    const result = expectOk(await rig.unpack(tar, { blockExecutables: false }));
    expect(result.files.map((f) => f.path).sort()).toEqual(['assets/photo.jpg', 'index.html', 'setup.exe']);
  });

  it('blocks an executable in inline JSON', async () => {
    const body = jsonBody(rig.file('body.json'), {
      files: [
        { path: 'index.html', content: PAGE },
        { path: 'a.bin', content: ELF.toString('base64'), encoding: 'base64' },
      ],
    });
    expect(expectError(await rig.unpack(body, { bodyKind: 'json', blockExecutables: true }))).toMatchObject({
      code: 'bad_request',
      details: { file: 'a.bin' },
    });
  });

  it('blocks an executable in a zip', async () => {
    const zip = await zipFromEntries(rig.file('bin.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'app/tool', data: ELF, method: 'deflate' },
    ]);
    expect(expectError(await rig.unpack(zip, { blockExecutables: true }))).toMatchObject({ code: 'bad_request', details: { file: 'app/tool' } });
  });
});

describe('temp files', () => {
  it('leaves no blob temp files behind after a rejected deploy', async () => {
    const key = awsKeyId();
    const dir = rig.file('site');
    writeTree(dir, { 'index.html': PAGE.repeat(100), 'a.css': 'x'.repeat(5000), 'z/last.js': `const k = "${key}";` });
    expect(expectError(await rig.unpack(tarGzWithTool(dir, rig.file('site.tgz')))).code).toBe('blocked_secret');
    expect(rig.blobFiles().filter((p) => p.startsWith('tmp/'))).toEqual([]);
  });
});
