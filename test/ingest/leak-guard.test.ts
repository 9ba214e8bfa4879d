import { describe, expect, it } from 'vitest';
import { createLeakGuard } from '../../src/ingest/leak-guard.js';
import { DeployRejected } from '../../src/ingest/rejection.js';

// Assembled at run time so this file holds no real-looking key.
const KEY = ['AKIA', 'Q3EGV7XM', 'JS2PLN5R'].join('');

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
// A PNG whose text chunk holds the key: a binary file, not read as text.
const PNG_WITH_TEXT = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR'),
  Buffer.from([0, 0, 2, 0x80, 0, 0, 1, 0xe0, 8, 6, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 40]),
  Buffer.from(`tEXtComment\0${KEY}`),
  Buffer.alloc(64, 0),
]);

/** What the guard says about one file: the finding, the refusal's code, or `published`. */
function verdict(path: string, bytes: Uint8Array): string {
  try {
    createLeakGuard().check(path, bytes);
    return 'published';
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

it('never repeats the key in the refusal', () => {
  const error = catchRejection(() => createLeakGuard().check('config.txt', utf16(CONFIG, 'le')));
  expect(error.details).toEqual({ file: 'config.txt', line: 3, kind: 'aws-access-key-id' });
  expect(JSON.stringify(error)).not.toContain(KEY.slice(4));
});

function catchRejection(run: () => void): DeployRejected['error'] {
  try {
    run();
  } catch (err) {
    if (err instanceof DeployRejected) return err.error;
    throw err;
  }
  throw new Error('expected a refusal');
}
