// The deploy surface's hostile inputs (SPEC 4.1 rules 4 and 6, SPEC 8), run against the real
// server: each row is an attack with the answer it must get. First the leak guard against keys
// spelled so that an 8-bit scan would not see them (UTF-16, UTF-32, gzip, brotli), in every body
// format; then the archive tricks that must be refused whatever the files hold. Keys are assembled
// at run time so this file holds none.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { tarBytes, tgzBytes, zipBytes, type ArchiveFiles } from '../helpers/archive-bytes.js';
import { deployTo, jsonDeployBody, type DeployAnswer, type DeployCall } from '../helpers/deploy-client.js';
import { callApi, request, type ApiResponse } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { tarFromEntries, writeTree, zipFromEntries, type TarEntrySpec, type ZipEntrySpec } from '../fixtures/archives.js';
import { useTestServer } from '../helpers/fixtures.js';

const KEY = ['AKIA', 'Q3EGV7XM', 'JS2PLN5R'].join('');
const DASHES = '-'.repeat(5);
const MB = 1024 * 1024;
const INDEX = '<!doctype html><h1>guarded</h1>\n';

// A live anonymous site that the hostile updates are aimed at; none of them may change it.
let site: { name: string; token: string; revision: string };
const work = tempDir('plinth-security-archives-');
let counter = 0;

const server = useTestServer();

beforeAll(async () => {
  const created = await deployTo(server.port, { body: tgzBytes([['index.html', INDEX]]) });
  expect(created.status).toBe(201);
  site = { name: created.json.site.name, token: created.json.site_token, revision: created.json.revision.id };
});

// ---- spellings of a file holding a key -------------------------------------------------------

// The key on line 3, with the Windows line ends PowerShell writes.
const CONFIG = `# deploy settings\r\nregion = "eu-west-1"\r\naws_access_key_id = ${KEY}\r\n`;
let seed = 77;
function base64(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out += alphabet[(seed >>> 16) % 64];
  }
  return out;
}
// A private key block from line 2 to line 6.
const PEM = `# build key\r\n${DASHES}BEGIN OPENSSH PRIVATE KEY${DASHES}\r\n${base64(70)}\r\n${base64(70)}\r\n${base64(30)}\r\n${DASHES}END OPENSSH PRIVATE KEY${DASHES}\r\n`;
// Lines that do not compress to nothing, so that half of the compressed data is half of the text.
const LOG = Array.from({ length: 3000 }, (_, i) => `${i} GET /page/${(i * 7919) % 1000} 200\n`).join('');

function utf16(text: string, order: 'le' | 'be', mark = true): Buffer {
  const body = Buffer.from(`${mark ? '\ufeff' : ''}${text}`, 'utf16le');
  return order === 'le' ? body : body.swap16();
}
function utf32(text: string, order: 'le' | 'be'): Buffer {
  const points = [0xfeff, ...[...text].map((char) => char.codePointAt(0)!)];
  const out = Buffer.alloc(points.length * 4);
  points.forEach((point, i) => (order === 'le' ? out.writeUInt32LE(point, 4 * i) : out.writeUInt32BE(point, 4 * i)));
  return out;
}
const gzip = (bytes: Uint8Array | string): Buffer => gzipSync(bytes);
const halfOf = (bytes: Buffer): Buffer => bytes.subarray(0, bytes.length >> 1);

const SPELLINGS: Array<[attack: string, path: string, bytes: Buffer, line: number, kind: string]> = [
  ['UTF-16LE with a byte-order mark (PowerShell)', 'config.txt', utf16(CONFIG, 'le'), 3, 'aws-access-key-id'],
  ['UTF-16BE with a byte-order mark', 'config.txt', utf16(CONFIG, 'be'), 3, 'aws-access-key-id'],
  ['UTF-16LE without a mark', 'config.txt', utf16(CONFIG, 'le', false), 3, 'aws-access-key-id'],
  ['UTF-16BE without a mark', 'config.txt', utf16(CONFIG, 'be', false), 3, 'aws-access-key-id'],
  ['UTF-8 with a byte-order mark', 'config.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(CONFIG)]), 3, 'aws-access-key-id'],
  ['UTF-32LE with a byte-order mark', 'config.txt', utf32(CONFIG, 'le'), 3, 'aws-access-key-id'],
  ['UTF-32BE with a byte-order mark', 'config.txt', utf32(CONFIG, 'be'), 3, 'aws-access-key-id'],
  ['a private key across lines in UTF-16LE', 'keys/build.txt', utf16(PEM, 'le'), 2, 'private-key'],
  ['gzip named .js.gz', 'assets/a.js.gz', gzip(CONFIG), 3, 'aws-access-key-id'],
  [
    'gzip named .svgz',
    'logo.svgz',
    gzip(`<svg xmlns="http://www.w3.org/2000/svg">\n<!-- generated -->\n<desc>${KEY}</desc>\n</svg>\n`),
    3,
    'aws-access-key-id',
  ],
  ['gzip without an extension', 'download', gzip(CONFIG), 3, 'aws-access-key-id'],
  ['multi-member gzip, the key in the second member', 'logs/app.log.gz', Buffer.concat([gzip('one\ntwo\n'), gzip(CONFIG)]), 5, 'aws-access-key-id'],
  ['gzip of UTF-16LE', 'config.txt.gz', gzip(utf16(CONFIG, 'le')), 3, 'aws-access-key-id'],
  ['brotli named .br', 'assets/a.js.br', brotliCompressSync(`${CONFIG}${LOG}`), 3, 'aws-access-key-id'],
  ['gzip inside gzip', 'assets/a.js.gz.gz', gzip(gzip(CONFIG)), 3, 'aws-access-key-id'],
  ['truncated gzip, the key before the cut', 'logs/old.log.gz', halfOf(gzip(`${CONFIG}${LOG}`)), 3, 'aws-access-key-id'],
];

type Format = 'tar.gz' | 'zip' | 'json';
const FORMATS: Format[] = ['tar.gz', 'zip', 'json'];

// Each attack is judged on its own: an update is based on whatever revision is live before it.
const live = (): string => server.store.getSite(site.name)!.liveRevision!;
const asUpdate = (): typeof site => ({ ...site, revision: live() });

function bodyIn(format: Format, files: ArchiveFiles, update?: typeof site): DeployCall {
  const target = update ? { token: update.token } : {};
  if (format === 'json') {
    const fields = update ? { site: update.name, base_revision: update.revision } : {};
    // Bytes go as base64, as a client must send them.
    return {
      body: jsonDeployBody(
        files.map(([path, content]) => [path, typeof content === 'string' ? content : Buffer.from(content)]),
        fields,
      ),
      contentType: 'application/json',
      ...target,
    };
  }
  const body = format === 'zip' ? zipBytes(files) : tgzBytes(files);
  return { body, ...target, ...(update ? { site: update.name, base: update.revision } : {}) };
}

function expectNoKey(answer: DeployAnswer): void {
  expect(answer.text).not.toContain(KEY);
  expect(answer.text).not.toContain(KEY.slice(4));
  expect(answer.text).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 16));
}

const visit = (name: string, path: string) => request({ port: server.port, host: `${name}.sites.localhost`, path });

/** The live site still serves its one revision, and the hostile file is not in it. */
async function expectSiteUnchanged(revision: string, path: string, bytes: Buffer): Promise<void> {
  expect(live()).toBe(revision);
  expect(server.store.getFile(revision, path)).toBeUndefined();
  const page = await visit(site.name, `/${path}`);
  expect(page.body.equals(bytes)).toBe(false);
  expect(page.text).not.toContain(KEY);
}

describe('the leak guard against hostile spellings of a key', () => {
  const rows = SPELLINGS.flatMap(([attack, path, bytes, line, kind]) => FORMATS.map((format) => [attack, format, path, bytes, line, kind] as const));

  it.each(rows)(
    'refuses %s sent as %s: 422 with {file, line, kind}, the key never echoed, nothing published',
    async (_attack, format, path, bytes, line, kind) => {
      const files: ArchiveFiles = [
        ['index.html', INDEX],
        [path, bytes],
      ];
      const sites = server.store.listSiteIds().length;
      const created = await deployTo(server.port, bodyIn(format, files));
      expect(created.status).toBe(422);
      expect(created.json.error).toMatchObject({ code: 'blocked_secret', details: { file: path, line, kind } });
      expectNoKey(created);
      expect(server.store.listSiteIds()).toHaveLength(sites);

      const before = asUpdate();
      const updated = await deployTo(server.port, bodyIn(format, files, before));
      expect(updated.status).toBe(422);
      expect(updated.json.error).toMatchObject({ code: 'blocked_secret', details: { file: path, line, kind } });
      expectNoKey(updated);
      await expectSiteUnchanged(before.revision, path, bytes);
    },
  );

  it.each<[string, string, Buffer, number, string]>([
    ['a gzip bomb (.svgz expanding past the 1 MB file limit)', 'logo.svgz', gzip(Buffer.alloc(4 * MB, 0x20)), 413, 'too_large'],
    ['a brotli bomb', 'assets/app.js.br', brotliCompressSync(Buffer.alloc(4 * MB, 0x20)), 413, 'too_large'],
    ['gzip inside gzip inside gzip', 'assets/a.js.gz.gz.gz', gzip(gzip(gzip(CONFIG))), 400, 'bad_request'],
    [
      'gzip data that is damaged after the key',
      'assets/a.js.gz',
      (() => {
        const bytes = gzip(`${CONFIG}${LOG}`);
        bytes.fill(0xff, bytes.length - 400, bytes.length - 300);
        return bytes;
      })(),
      400,
      'bad_request',
    ],
  ])('refuses %s, naming the file, in every format', async (_attack, path, bytes, status, code) => {
    for (const format of FORMATS) {
      const files: ArchiveFiles = [
        ['index.html', INDEX],
        [path, bytes],
      ];
      const before = asUpdate();
      const answer = await deployTo(server.port, bodyIn(format, files, before));
      expect(answer.status, format).toBe(status);
      expect(answer.json.error, format).toMatchObject({ code, details: { file: path } });
      expectNoKey(answer);
      await expectSiteUnchanged(before.revision, path, bytes);
    }
  });

  it.each<[string, string, Buffer]>([
    [
      'a PNG image',
      'img/dot.png',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]),
    ],
    ['UTF-16 text without a key', 'notes.txt', utf16('# notes\r\nnothing secret here\r\n', 'le')],
    ['gzip without a key', 'assets/a.js.gz', gzip(`console.log("hello");\n${LOG}`)],
    ['brotli without a key', 'assets/a.js.br', brotliCompressSync(`console.log("hello");\n${LOG}`)],
  ])('still publishes %s', async (_what, path, bytes) => {
    for (const format of FORMATS) {
      const answer = await deployTo(
        server.port,
        bodyIn(format, [
          ['index.html', INDEX],
          [path, bytes],
        ]),
      );
      expect(answer.status, format).toBe(201);
      expect((await visit(answer.json.site.name, `/${path}`)).body.equals(bytes), format).toBe(true);
    }
  });
});

// ---- archive tricks ---------------------------------------------------------------------------
// Symlinks, hard links, devices, FIFOs, `../`, absolute and drive paths, case duplicates, a tar
// entry declaring 10 GB and a zip bomb are in test/api/deploy.test.ts with this shape; these are
// the rest.

async function tarGz(entries: TarEntrySpec[]): Promise<Buffer> {
  return readFileSync(await tarFromEntries(join(work, `t-${++counter}.tgz`), [{ name: 'index.html', content: INDEX }, ...entries]));
}
async function zip(entries: ZipEntrySpec[]): Promise<Buffer> {
  return readFileSync(await zipFromEntries(join(work, `z-${++counter}.zip`), [{ name: 'index.html', data: Buffer.from(INDEX) }, ...entries]));
}
const json = (files: Array<{ path: string; content: string }>): DeployCall => ({
  body: JSON.stringify({ files: [{ path: 'index.html', content: INDEX }, ...files] }),
  contentType: 'application/json',
});

const ARCHIVE_ATTACKS: Array<[attack: string, make: () => Promise<DeployCall>, status: number, code: string, says: RegExp]> = [
  [
    'a path nested past the 1,024-byte cap (tar, pax record)',
    async () => ({ body: await tarGz([{ name: `${'a/'.repeat(520)}x.html`, content: 'x' }]) }),
    400,
    'bad_request',
    /longer than 1024 bytes/,
  ],
  [
    'a path nested past the 1,024-byte cap (zip)',
    async () => ({ body: await zip([{ name: `${'a/'.repeat(520)}x.html`, data: Buffer.from('x') }]) }),
    400,
    'bad_request',
    /longer than 1024 bytes/,
  ],
  [
    'a folder name over 255 bytes',
    async () => ({ body: await tarGz([{ name: `${'n'.repeat(300)}/x.html`, content: 'x' }]) }),
    400,
    'bad_request',
    /longer than 255 bytes/,
  ],
  [
    '`..` hidden in a long (pax) tar path',
    async () => ({ body: await tarGz([{ name: `${'d/'.repeat(60)}../../${'e/'.repeat(10)}${'../'.repeat(70)}x.html`, content: 'x' }]) }),
    400,
    'bad_request',
    /climbs out/,
  ],
  ['an absolute zip path', async () => ({ body: await zip([{ name: '/etc/cron.d/x', data: Buffer.from('x') }]) }), 400, 'bad_request', /absolute/],
  ['a NUL in a zip name', async () => ({ body: await zip([{ name: 'a.html\u0000.png', data: Buffer.from('x') }]) }), 400, 'bad_request', /control character/],
  ['`../` in an inline JSON path', async () => json([{ path: '../escape.html', content: 'x' }]), 400, 'bad_request', /climbs out/],
  ['an absolute inline JSON path', async () => json([{ path: '/etc/passwd', content: 'x' }]), 400, 'bad_request', /absolute/],
  [
    'a device entry in a zip',
    async () => ({ body: await zip([{ name: 'dev/null', data: Buffer.alloc(0), unixMode: 0o020644 }]) }),
    400,
    'bad_request',
    /device/,
  ],
  ['a FIFO in a zip', async () => ({ body: await zip([{ name: 'pipe', data: Buffer.alloc(0), unixMode: 0o010644 }]) }), 400, 'bad_request', /named pipe/],
  [
    'the same path twice in a zip',
    async () => ({
      body: await zip([
        { name: 'a.html', data: Buffer.from('1') },
        { name: 'a.html', data: Buffer.from('2') },
      ]),
    }),
    400,
    'bad_request',
    /more than once/,
  ],
  [
    'paths equal apart from Unicode form (NFC and NFD)',
    async () => ({
      body: await tarGz([
        { name: 'caf\u00e9.html', content: '1' },
        { name: 'cafe\u0301.html', content: '2' },
      ]),
    }),
    400,
    'bad_request',
    /letter case/,
  ],
  [
    'paths equal apart from case, in inline JSON',
    async () =>
      json([
        { path: 'About.html', content: '1' },
        { path: 'about.html', content: '2' },
      ]),
    400,
    'bad_request',
    /letter case/,
  ],
  [
    'a zip entry whose local header names another file',
    async () => ({ body: await zip([{ name: 'about.html', data: Buffer.from('x'), localName: '../../evil.html' }]) }),
    400,
    'bad_request',
    /local header of "about.html" disagrees with the central directory on the name/,
  ],
  [
    'a zip entry whose local header gives another compression method',
    async () => ({ body: await zip([{ name: 'about.html', data: Buffer.from('x'), localMethod: 8 }]) }),
    400,
    'bad_request',
    /on the compression method/,
  ],
  [
    'a zip entry declaring 4 GB that holds 1 KB',
    async () => ({ body: await zip([{ name: 'big.bin', data: Buffer.alloc(1024, 1), method: 'deflate', declaredSize: 0xffffffff }]) }),
    400,
    'bad_request',
    /damaged/,
  ],
  [
    'a zip entry inflating far past the 1 KB it declares',
    async () => ({ body: await zip([{ name: 'small.txt', zeros: 64 * MB, declaredSize: 1024 }]) }),
    400,
    'bad_request',
    /damaged/,
  ],
  [
    'a zip bomb of entries each under the file limit',
    async () => ({
      body: await zip([
        { name: 'z0.bin', zeros: 900 * 1024 },
        { name: 'z1.bin', zeros: 900 * 1024 },
      ]),
    }),
    413,
    'too_large',
    /the limit per site is 1 MB/,
  ],
  [
    'a gzip bomb inside a tar entry',
    async () => ({ body: await tarGz([{ name: 'zeros.txt', content: Buffer.alloc(64 * MB) }]) }),
    413,
    'too_large',
    /per-file limit/,
  ],
  [
    'an encrypted zip entry (zip -P)',
    async () => {
      const dir = join(work, `enc-${++counter}`);
      writeTree(dir, { 'index.html': INDEX, 'secret.txt': CONFIG });
      execFileSync('zip', ['-q', '-P', 'hunter2', 'site.zip', 'index.html', 'secret.txt'], { cwd: dir });
      return { body: readFileSync(join(dir, 'site.zip')) };
    },
    400,
    'bad_request',
    /encrypted/,
  ],
  [
    'an uncompressed tar with a symlink',
    async () => {
      const files = tarBytes([['index.html', INDEX]]);
      const link = readFileSync(
        await tarFromEntries(join(work, `l-${++counter}.tar`), [{ name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }], { gzip: false }),
      );
      return { body: Buffer.concat([files.subarray(0, files.length - 1024), link]) };
    },
    400,
    'bad_request',
    /symbolic link/,
  ],
];

describe('archive tricks', () => {
  it.each(ARCHIVE_ATTACKS)('refuses %s, creating no site', async (_attack, make, status, code, says) => {
    const call = await make();
    const sites = server.store.listSiteIds().length;
    const answer = await deployTo(server.port, call);
    expect(answer.status).toBe(status);
    expect(answer.json.error?.code).toBe(code);
    expect(answer.json.error?.message, answer.json.error?.message).toMatch(says);
    expect(server.store.listSiteIds()).toHaveLength(sites);
  });

  it('publishes a path nested 500 folders deep: depth is bounded by the 1,024-byte path cap, not on its own', async () => {
    const deep = `${'a/'.repeat(500)}x.txt`;
    const answer = await deployTo(server.port, { body: await tarGz([{ name: deep, content: 'deep' }]) });
    expect(answer.status).toBe(201);
    expect((await visit(answer.json.site.name, `/${deep}`)).text).toBe('deep');
  });
});

// ---- AWS secret access keys -------------------------------------------------------------------
// An AWS key id is half a credential: the secret access key must be caught however a config spells
// it, and the refusal must name every line with a key, or a caller that removes only the id's line
// publishes the secret half.

// A made-up secret access key, assembled at run time (40 base64 characters).
const AWS_SECRET = ['Hk3n9Qz2Lm', 'P8vR4tY7wX', '1cB5dF6gJ0', 'sAeU/OpZ+C'].join('');
const ID_LINE = `    accessKeyId: "${KEY}",`;

const SECRET_SPELLINGS: Array<[config: string, path: string, text: string, line: number]> = [
  ['JS, in a template literal', 'js/aws.js', `const s3 = new S3Client({\n  credentials: {\n    secretAccessKey: \`${AWS_SECRET}\`,\n  },\n});\n`, 3],
  ['JS, double-quoted and aligned', 'js/aws.js', `export default {\n  region:          "eu-west-1",\n  secretAccessKey: "${AWS_SECRET}",\n};\n`, 3],
  ['JSON, as the AWS CLI and STS write it', 'creds.json', `{\n  "Credentials": {\n    "SecretAccessKey": "${AWS_SECRET}"\n  }\n}\n`, 3],
  ['YAML', 'config.yml', `aws:\n  secret_access_key: ${AWS_SECRET}\n`, 2],
  ['.env style, quoted', 'settings.txt', `# production\nAWS_SECRET_ACCESS_KEY="${AWS_SECRET}"\n`, 2],
  ['a shell export', 'deploy.sh', `#!/bin/sh\nexport AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\n`, 2],
  ['INI', 'credentials.ini', `[default]\naws_secret_access_key = ${AWS_SECRET}\n`, 2],
  ['TOML', 'config.toml', `[aws]\nsecret_access_key = "${AWS_SECRET}"\n`, 2],
  ['aws.secretKey', 'app.properties', `aws.accessKeyId=${KEY.slice(0, 4)}…\naws.secretKey=${AWS_SECRET}\n`, 2],
  ['a Dockerfile ENV', 'Dockerfile.txt', `FROM node:20\nENV AWS_SECRET_ACCESS_KEY ${AWS_SECRET}\n`, 2],
  ['escaped JSON in a script', 'js/env.js', `window.ENV = JSON.parse("{\\"secretAccessKey\\":\\"${AWS_SECRET}\\"}");\n`, 1],
  ['Terraform secret_key beside the key id', 'main.tf.txt', `provider "aws" {\n  access_key = "${KEY}"\n  secret_key = "${AWS_SECRET}"\n}\n`, 3],
  [
    'Java, the pair as two arguments',
    'src/Aws.java.txt',
    `class Aws {\n  static final AWSCredentials CREDS = new BasicAWSCredentials("${KEY}", "${AWS_SECRET}");\n}\n`,
    2,
  ],
];

const SECRET_LOOKALIKES: Array<[what: string, text: string]> = [
  ['a placeholder in the docs', 'Set AWS_SECRET_ACCESS_KEY=<your key> before you run the script.\n'],
  ['the key taken from the environment', 'const s3 = new S3Client({ credentials: { secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY } });\n'],
  ['AWS’s documented example key', `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLE'}KEY\n`],
  ['a SHA-1 under the name', 'secret_access_key: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12\n'],
  ['a Flask secret_key with no AWS key id near', `app.secret_key = '${AWS_SECRET}'\n`],
];

describe('the leak guard and AWS secret access keys', () => {
  it('names the id’s line and the secret key’s line, in details, message and agent_message', async () => {
    const config = `export const s3 = new S3Client({\n  credentials: {\n${ID_LINE}\n    secretAccessKey: \`${AWS_SECRET}\`,\n  },\n});\n`;
    for (const format of FORMATS) {
      const answer = await deployTo(
        server.port,
        bodyIn(format, [
          ['index.html', INDEX],
          ['js/aws.js', config],
        ]),
      );
      expect(answer.status, format).toBe(422);
      expect(answer.json.error.details, format).toEqual({
        file: 'js/aws.js',
        line: 3,
        kind: 'aws-access-key-id',
        findings: [
          { file: 'js/aws.js', line: 3, kind: 'aws-access-key-id' },
          { file: 'js/aws.js', line: 4, kind: 'aws-secret-access-key' },
        ],
      });
      for (const text of [answer.json.error.message, answer.json.agent_message]) {
        expect(text, format).toContain('js/aws.js line 3 (aws-access-key-id), line 4 (aws-secret-access-key)');
      }
      expectNoKey(answer);
      expect(answer.text).not.toContain(AWS_SECRET.slice(10, 30));
    }
  });

  it('names both kinds when the id and the secret key share a line', async () => {
    const answer = await deployTo(
      server.port,
      bodyIn('json', [
        ['index.html', INDEX],
        ['creds.json', `{"AccessKeyId":"${KEY}","SecretAccessKey":"${AWS_SECRET}","Expiration":"2026-01-01T00:00:00Z"}`],
      ]),
    );
    expect(answer.status).toBe(422);
    expect(answer.json.error.details.findings).toEqual([
      { file: 'creds.json', line: 1, kind: 'aws-access-key-id' },
      { file: 'creds.json', line: 1, kind: 'aws-secret-access-key' },
    ]);
    expect(answer.json.agent_message).toContain('creds.json line 1 (aws-access-key-id, aws-secret-access-key)');
  });

  it.each(SECRET_SPELLINGS)('refuses the secret key alone, spelled for %s', async (_config, path, text, line) => {
    const sites = server.store.listSiteIds().length;
    const answer = await deployTo(
      server.port,
      bodyIn('tar.gz', [
        ['index.html', INDEX],
        [path, text],
      ]),
    );
    expect(answer.status).toBe(422);
    expect(answer.json.error.details.findings).toContainEqual({ file: path, line, kind: 'aws-secret-access-key' });
    expect(answer.text).not.toContain(AWS_SECRET.slice(10, 30));
    expect(server.store.listSiteIds()).toHaveLength(sites);
  });

  it.each(SECRET_LOOKALIKES)('still publishes %s', async (_what, text) => {
    const answer = await deployTo(
      server.port,
      bodyIn('tar.gz', [
        ['index.html', INDEX],
        ['notes.txt', text],
      ]),
    );
    expect(answer.status, answer.text).toBe(201);
  });
});

// ---- the same bytes at several paths ----------------------------------------------------------
// Brotli is read as brotli only by a `.br` name, and bytes may reach a site under one name and be
// published under others: a manifest's part names its files as it likes (any path of the manifest
// with that content, or none), and content sent by sha256 is whatever the site stored before, under
// whatever name. The guard must judge the bytes as every path they will be published at.

const HIDDEN = brotliCompressSync(`${CONFIG}${LOG}`);
const CLEAN_BROTLI = brotliCompressSync(`console.log("hello");\n${LOG}`);
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const describeFiles = (files: ArchiveFiles) =>
  files.map(([path, content]) => ({ path, size: Buffer.byteLength(content), sha256: sha256(Buffer.from(content)) }));
const apiCall = (method: string, path: string, token: string, body: { json?: unknown; raw?: Buffer | string; type?: string } = {}): Promise<ApiResponse> =>
  callApi(server.port, {
    method,
    path,
    token,
    ...(body.json !== undefined ? { body: body.json } : {}),
    ...(body.raw !== undefined ? { raw: body.raw, headers: body.type ? { 'content-type': body.type } : {} } : {}),
  });

/** A new anonymous site of its own, with `files`; its name, site token and live revision. */
async function siteWith(files: ArchiveFiles): Promise<{ name: string; token: string; revision: string }> {
  const created = await deployTo(server.port, { body: tgzBytes(files) });
  expect(created.status, created.text).toBe(201);
  return { name: created.json.site.name, token: created.json.site_token, revision: created.json.revision.id };
}

function expectRefusedAt(answer: ApiResponse, file: string): void {
  expect(answer.status, answer.text).toBe(422);
  expect(answer.json.error).toMatchObject({ code: 'blocked_secret', details: { file, line: 3, kind: 'aws-access-key-id' } });
  expect(answer.json.agent_message).toContain(`${file} line 3 (once decompressed)`);
  expectNoKey(answer);
}

describe('the leak guard judges bytes as every path they are published at', () => {
  const parts: Array<[how: string, part: (published: string) => { raw: Buffer | string; type?: string }]> = [
    ['an archive naming it x.bin', () => ({ raw: tgzBytes([['x.bin', HIDDEN]]) })],
    ['an archive naming it after no path of the manifest', () => ({ raw: tgzBytes([['upload/blob-1', HIDDEN]]) })],
    ['a zip naming it x.bin', () => ({ raw: zipBytes([['x.bin', HIDDEN]]) })],
    ['JSON naming it x.bin', () => ({ raw: jsonDeployBody([['x.bin', HIDDEN]]), type: 'application/json' })],
  ];

  it.each(parts)('refuses a manifest part carrying brotli as %s when the manifest publishes it as config.js.br', async (_how, part) => {
    const target = await siteWith([['index.html', INDEX]]);
    const files: ArchiveFiles = [
      ['index.html', INDEX],
      ['x.bin', HIDDEN],
      ['config.js.br', HIDDEN],
    ];
    const made = await apiCall('POST', '/v1/deploy/manifest', target.token, {
      json: { site: target.name, base_revision: target.revision, files: describeFiles(files) },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json.missing).toEqual([sha256(HIDDEN)]);
    const sent = await apiCall('POST', `/v1/deploy?manifest=${made.json.manifest}`, target.token, part('config.js.br'));
    expectRefusedAt(sent, 'config.js.br');
    // Refused for good: the same content can never finish this manifest.
    expect((await apiCall('GET', `/v1/deploy/manifest/${made.json.manifest}`, target.token)).status).toBe(422);
    expect(server.store.getSite(target.name)!.liveRevision).toBe(target.revision);
    expect((await visit(target.name, '/config.js.br')).body.equals(HIDDEN)).toBe(false);
  });

  it('refuses stored content sent by sha256 in JSON at a new .br path', async () => {
    // Published as x.bin, the bytes are not brotli to anyone; as config.js.br they are.
    const target = await siteWith([
      ['index.html', INDEX],
      ['x.bin', HIDDEN],
    ]);
    const answer = await deployTo(server.port, {
      token: target.token,
      contentType: 'application/json',
      body: JSON.stringify({
        site: target.name,
        base_revision: target.revision,
        files: [
          { path: 'index.html', content: INDEX },
          { path: 'x.bin', sha256: sha256(HIDDEN), size: HIDDEN.length },
          { path: 'config.js.br', sha256: sha256(HIDDEN), size: HIDDEN.length },
        ],
      }),
    });
    expectRefusedAt(answer, 'config.js.br');
    expect(answer.json.error.details.findings).toEqual([{ file: 'config.js.br', line: 3, kind: 'aws-access-key-id' }]);
    expect(server.store.getSite(target.name)!.liveRevision).toBe(target.revision);
  });

  it('refuses a manifest that reuses stored content at a new .br path, for good', async () => {
    const target = await siteWith([
      ['index.html', INDEX],
      ['x.bin', HIDDEN],
    ]);
    const made = await apiCall('POST', '/v1/deploy/manifest', target.token, {
      json: {
        site: target.name,
        base_revision: target.revision,
        files: describeFiles([
          ['index.html', INDEX],
          ['assets/config.js.br', HIDDEN],
        ]),
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json.missing).toEqual([]);
    const finished = await apiCall('POST', `/v1/deploy?manifest=${made.json.manifest}`, target.token, { raw: '' });
    expectRefusedAt(finished, 'assets/config.js.br');
    expect((await apiCall('GET', `/v1/deploy/manifest/${made.json.manifest}`, target.token)).status).toBe(422);
    expect(server.store.getSite(target.name)!.liveRevision).toBe(target.revision);
  });

  it('refuses the same bytes as x.bin and config.js.br in one archive, naming the .br path', async () => {
    for (const format of FORMATS) {
      const answer = await deployTo(
        server.port,
        bodyIn(format, [
          ['index.html', INDEX],
          ['x.bin', HIDDEN],
          ['config.js.br', HIDDEN],
        ]),
      );
      expectRefusedAt(answer, 'config.js.br');
      expect(answer.json.error.details.findings, format).toEqual([{ file: 'config.js.br', line: 3, kind: 'aws-access-key-id' }]);
    }
  });

  it('still publishes clean brotli reused at its own path and at a new .br path', async () => {
    const target = await siteWith([
      ['index.html', INDEX],
      ['app.js.br', CLEAN_BROTLI],
    ]);
    const answer = await deployTo(server.port, {
      token: target.token,
      contentType: 'application/json',
      body: JSON.stringify({
        site: target.name,
        base_revision: target.revision,
        files: [
          { path: 'index.html', content: INDEX },
          { path: 'app.js.br', sha256: sha256(CLEAN_BROTLI), size: CLEAN_BROTLI.length },
          { path: 'vendor.js.br', sha256: sha256(CLEAN_BROTLI), size: CLEAN_BROTLI.length },
        ],
      }),
    });
    expect(answer.status, answer.text).toBe(201);
    expect((await visit(target.name, '/vendor.js.br')).body.equals(CLEAN_BROTLI)).toBe(true);
  });
});
