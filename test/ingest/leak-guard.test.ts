import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createLeakGuard, MAX_SECRET_FINDINGS, type LeakGuardOptions } from '../../src/ingest/leak-guard.js';
import { DeployRejected, secretsFound } from '../../src/ingest/rejection.js';

// Assembled at run time so this file holds no real-looking key.
const KEY = ['AKIA', 'Q3EGV7XM', 'JS2PLN5R'].join('');
const MB = 1024 * 1024;
const LIMITS: LeakGuardOptions = { maxFileBytes: 1 * MB, maxExpandedBytes: 4 * MB };

// The key on line 3, with Windows line ends as PowerShell writes them.
const CONFIG = `# deploy settings\r\nregion = "eu-west-1"\r\naws_access_key_id = ${KEY}\r\n`;
const CLEAN = '# deploy settings\r\nregion = "eu-west-1"\r\n';

let seed = 424242;
function base64(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out += alphabet[(seed >>> 16) % 64];
  }
  return out;
}
const DASHES = '-'.repeat(5);
// A private key block that starts on line 2 and spans five lines.
const PEM = `# key for the build\r\n${DASHES}BEGIN RSA PRIVATE KEY${DASHES}\r\n${base64(64)}\r\n${base64(64)}\r\n${base64(20)}\r\n${DASHES}END RSA PRIVATE KEY${DASHES}\r\n`;

const utf8 = (text: string): Buffer => Buffer.from(text);
const utf8Bom = (text: string): Buffer => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
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
const brotli = (bytes: Uint8Array | string): Buffer => brotliCompressSync(bytes);
// Lines that do not compress to nothing, so that half of the gzip data is half of the text.
const LOG = Array.from({ length: 3000 }, (_, i) => `${i} GET /page/${(i * 7919) % 1000} 200\n`).join('');
const halfOf = (bytes: Buffer): Buffer => bytes.subarray(0, bytes.length >> 1);
function damaged(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  for (let i = 12; i < 20; i++) copy[i]! ^= 0x5a;
  return copy;
}
// A PNG whose text chunk holds the key: a binary file, not read as text.
const PNG_WITH_TEXT = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR'),
  Buffer.from([0, 0, 2, 0x80, 0, 0, 1, 0xe0, 8, 6, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 40]),
  Buffer.from(`tEXtComment\0${KEY}`),
  Buffer.alloc(64, 0),
]);

/** What the guard says about one file: the finding, the refusal's code, or `published`. */
function verdict(path: string, bytes: Uint8Array, limits = LIMITS): string {
  try {
    const [hit] = createLeakGuard(limits).check(path, bytes);
    return hit ? `${hit.kind} at line ${hit.line}` : 'published';
  } catch (err) {
    if (!(err instanceof DeployRejected)) throw err;
    const { code, details } = err.error;
    expect(JSON.stringify(err.error)).not.toContain(KEY.slice(4));
    return code === 'blocked_secret' ? `${String(details?.kind)} at line ${String(details?.line)}` : code;
  }
}

const FOUND = 'aws-access-key-id at line 3';

describe('the leak guard reads every spelling of a text file', () => {
  it.each<[string, string, Uint8Array, string]>([
    ['plain UTF-8', 'config.txt', utf8(CONFIG), FOUND],
    ['UTF-8 with a byte-order mark', 'config.txt', utf8Bom(CONFIG), FOUND],
    ['UTF-16LE with a mark (PowerShell `>`)', 'config.txt', utf16(CONFIG, 'le'), FOUND],
    ['UTF-16BE with a mark', 'config.txt', utf16(CONFIG, 'be'), FOUND],
    ['UTF-16LE without a mark', 'config.txt', utf16(CONFIG, 'le', false), FOUND],
    ['UTF-16BE without a mark', 'config.txt', utf16(CONFIG, 'be', false), FOUND],
    ['UTF-32LE with a mark', 'config.txt', utf32(CONFIG, 'le'), FOUND],
    ['UTF-32BE with a mark', 'config.txt', utf32(CONFIG, 'be'), FOUND],
    ['a private key block across lines in UTF-16LE', 'deploy.txt', utf16(PEM, 'le'), 'private-key at line 2'],
    ['a private key block across lines in UTF-16BE without a mark', 'deploy.txt', utf16(PEM, 'be', false), 'private-key at line 2'],
    ['UTF-16LE after 500 lines', 'log.txt', utf16(`${'ok\r\n'.repeat(500)}${CONFIG}`, 'le'), 'aws-access-key-id at line 503'],
    ['UTF-16LE without a secret', 'config.txt', utf16(CLEAN, 'le'), 'published'],
    // What the guard does not read, stated so that a change is a decision:
    ['a key in a PNG text chunk (binary files are not scanned)', 'logo.png', PNG_WITH_TEXT, 'published'],
  ])('%s', (_name, path, bytes, expected) => {
    expect(verdict(path, bytes)).toBe(expected);
  });
});

describe('the leak guard reads compressed files as what they expand to', () => {
  const members = Buffer.concat([gzip('first member\nstill the first\n'), gzip(`second member\n${KEY}\n`)]);
  it.each<[string, string, Uint8Array, string]>([
    ['gzip named .gz', 'a.js.gz', gzip(CONFIG), FOUND],
    ['gzip named .svgz', 'logo.svgz', gzip(`<svg>\n<!-- x -->\n<desc>${KEY}</desc>\n</svg>`), FOUND],
    ['gzip without an extension', 'download', gzip(CONFIG), FOUND],
    ['gzip named .txt', 'notes.txt', gzip(CONFIG), FOUND],
    ['multi-member gzip, the key in the second member (lines run on)', 'a.log.gz', members, 'aws-access-key-id at line 4'],
    ['gzip of UTF-16LE', 'config.txt.gz', gzip(utf16(CONFIG, 'le')), FOUND],
    ['gzip of UTF-16BE without a mark', 'config.txt.gz', gzip(utf16(CONFIG, 'be', false)), FOUND],
    ['gzip padded with zeros (tape-style)', 'a.js.gz', Buffer.concat([gzip(CONFIG), Buffer.alloc(512)]), FOUND],
    ['brotli named .br', 'a.js.br', brotli(`${CONFIG}${LOG}`), FOUND],
    ['truncated brotli, the key before the cut', 'a.log.br', halfOf(brotli(`${CONFIG}${LOG}`)), FOUND],
    ['brotli of UTF-16LE named .br', 'config.txt.br', brotli(utf16(CONFIG, 'le')), FOUND],
    ['brotli holding gzip', 'a.js.gz.br', brotli(gzip(CONFIG)), FOUND],
    ['plain text named .br', 'messages.br', utf8(CONFIG), FOUND],
    ['gzip inside gzip', 'a.js.gz.gz', gzip(gzip(CONFIG)), FOUND],
    ['truncated gzip, the key before the cut', 'a.log.gz', halfOf(gzip(`${CONFIG}${LOG}`)), FOUND],
    ['gzip without a secret', 'a.js.gz', gzip(CLEAN), 'published'],
    ['brotli without a secret', 'a.js.br', brotli(CLEAN), 'published'],
    ['gzip inside gzip inside gzip', 'a.js.gz.gz.gz', gzip(gzip(gzip(CONFIG))), 'bad_request'],
    ['gzip with damaged data', 'a.js.gz', damaged(gzip(CONFIG.repeat(20))), 'bad_request'],
    ['gzip followed by trailing garbage', 'a.js.gz', Buffer.concat([gzip(CLEAN), utf8('trailing garbage')]), 'bad_request'],
    ['a gzip bomb (2 MB of zeros, 1 MB limit)', 'zeros.gz', gzip(Buffer.alloc(2 * MB)), 'too_large'],
    ['a brotli bomb', 'zeros.br', brotli(Buffer.alloc(2 * MB)), 'too_large'],
    ['a gzip bomb inside gzip', 'zeros.gz.gz', gzip(gzip(Buffer.alloc(2 * MB))), 'too_large'],
    // What the guard does not read, stated so that a change is a decision:
    ['brotli not named .br (brotli has no magic bytes)', 'a.js', brotli(`${CONFIG}${LOG}`), 'published'],
    ['bytes 1f 8b that are not deflate data (judged as they are)', 'a.bin', Buffer.concat([Buffer.from([0x1f, 0x8b, 0x09]), utf8(CONFIG)]), FOUND],
  ])('%s', (_name, path, bytes, expected) => {
    expect(verdict(path, bytes)).toBe(expected);
  });

  it('accepts a file that expands to exactly the per-file limit', () => {
    expect(verdict('big.txt.gz', gzip(Buffer.alloc(1 * MB, 0x61)))).toBe('published');
    expect(verdict('big.txt.gz', gzip(Buffer.alloc(1 * MB + 1, 0x61)))).toBe('too_large');
  });

  it('names the file and the per-file limit when a file expands too far', () => {
    const guard = createLeakGuard(LIMITS);
    const error = catchRejection(() => guard.check('zeros.gz', gzip(Buffer.alloc(2 * MB))));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'zeros.gz', limit: 1 * MB } });
    expect(error.message).toContain('1 MB per-file limit');
  });

  it('holds all compressed files of a deploy to the site limit together', () => {
    const guard = createLeakGuard({ maxFileBytes: 1 * MB, maxExpandedBytes: 2 * MB });
    const file = gzip(Buffer.alloc(900 * 1024, 0x61));
    guard.check('a.gz', file);
    guard.check('b.gz', file);
    const error = catchRejection(() => guard.check('c.gz', file));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'c.gz', limit: 2 * MB } });
    expect(error.message).toContain('expand to more than 2 MB');
  });

  it('stops a bomb at the limit instead of inflating all of it', () => {
    const bomb = gzip(Buffer.alloc(64 * MB));
    expect(verdict('zeros.gz', bomb)).toBe('too_large');
  });

  it('says the line is one of the decompressed text, and never repeats the key', () => {
    const error = refusal('a.js.gz', gzip(CONFIG));
    expect(error.details).toEqual({ file: 'a.js.gz', line: 3, kind: 'aws-access-key-id', findings: [{ file: 'a.js.gz', line: 3, kind: 'aws-access-key-id' }] });
    expect(error.message).toContain('line 3 (once decompressed)');
    expect(JSON.stringify(error)).not.toContain(KEY.slice(4));
  });
});

it('never repeats the key in the refusal', () => {
  const error = refusal('config.txt', utf16(CONFIG, 'le'));
  expect(error.details).toMatchObject({ file: 'config.txt', line: 3, kind: 'aws-access-key-id' });
  expect(JSON.stringify(error)).not.toContain(KEY.slice(4));
});

/** The deploy's refusal for what the guard found in one file. */
function refusal(path: string, bytes: Uint8Array): DeployRejected['error'] {
  const hits = createLeakGuard(LIMITS).check(path, bytes);
  expect(hits.length).toBeGreaterThan(0);
  return secretsFound(hits, MAX_SECRET_FINDINGS).error;
}

function catchRejection(run: () => void): DeployRejected['error'] {
  try {
    run();
  } catch (err) {
    if (err instanceof DeployRejected) return err.error;
    throw err;
  }
  throw new Error('expected a refusal');
}

it('finds every key of a file, one per line, in order', () => {
  const text = `${CONFIG}ok\nsecond = ${KEY}\r\nthird = ${KEY} and ${KEY}\n`;
  expect(createLeakGuard(LIMITS).check('keys.txt', utf8(text))).toEqual([
    { file: 'keys.txt', line: 3, kind: 'aws-access-key-id', compressed: false },
    { file: 'keys.txt', line: 5, kind: 'aws-access-key-id', compressed: false },
    { file: 'keys.txt', line: 6, kind: 'aws-access-key-id', compressed: false },
  ]);
});

describe('the leak guard judges bytes as every path they are published at', () => {
  const hidden = brotli(`${CONFIG}${LOG}`);
  const check = (paths: string | string[], bytes: Uint8Array) =>
    createLeakGuard(LIMITS)
      .check(paths, bytes)
      .map((hit) => `${hit.file}: ${hit.kind} at line ${hit.line}${hit.compressed ? ' (decompressed)' : ''}`);

  it.each<[string, string | string[], Uint8Array, string[]]>([
    ['brotli as x.bin alone (not read as brotli)', 'x.bin', hidden, []],
    [
      'brotli as x.bin and config.js.br: found at the .br path',
      ['x.bin', 'config.js.br'],
      hidden,
      ['config.js.br: aws-access-key-id at line 3 (decompressed)'],
    ],
    [
      'brotli as two .br paths, any case',
      ['a.js.br', 'B.JS.BR'],
      hidden,
      ['a.js.br: aws-access-key-id at line 3 (decompressed)', 'B.JS.BR: aws-access-key-id at line 3 (decompressed)'],
    ],
    ['a .br path named twice counts once', ['a.js.br', 'a.js.br'], hidden, ['a.js.br: aws-access-key-id at line 3 (decompressed)']],
    ['plain text at two paths: found at both', ['a.txt', 'b.js'], utf8(CONFIG), ['a.txt: aws-access-key-id at line 3', 'b.js: aws-access-key-id at line 3']],
    [
      'plain text at a .br path and another',
      ['notes.br', 'notes.txt'],
      utf8(CONFIG),
      ['notes.br: aws-access-key-id at line 3', 'notes.txt: aws-access-key-id at line 3'],
    ],
    [
      'gzip at a .br path and another',
      ['a.gz', 'a.br'],
      gzip(CONFIG),
      ['a.gz: aws-access-key-id at line 3 (decompressed)', 'a.br: aws-access-key-id at line 3 (decompressed)'],
    ],
    ['brotli holding gzip at a .br path', ['x', 'x.gz.br'], brotli(gzip(CONFIG)), ['x.gz.br: aws-access-key-id at line 3 (decompressed)']],
    ['clean brotli at a .br path', ['x.bin', 'app.js.br'], brotli(`${CLEAN}${LOG}`), []],
  ])('%s', (_name, paths, bytes, expected) => {
    expect(check(paths, bytes)).toEqual(expected);
  });

  it('refuses a brotli bomb published at a .br path, naming that path', () => {
    const error = catchRejection(() => createLeakGuard(LIMITS).check(['zeros.bin', 'zeros.js.br'], brotli(Buffer.alloc(2 * MB))));
    expect(error).toMatchObject({ code: 'too_large', details: { file: 'zeros.js.br' } });
  });
});
