import { describe, expect, it } from 'vitest';
import { decodeText, detectTextEncoding, looksLikeText } from '../../src/ingest/text-encoding.js';

const encode = (value: string): Uint8Array => new TextEncoder().encode(value);

// The spellings a text file arrives in. UTF-16 and UTF-32 are written here rather than with a
// library so that each byte order is spelled out.
function utf16(text: string, order: 'le' | 'be', mark = true): Uint8Array {
  const body = Buffer.from(`${mark ? '\ufeff' : ''}${text}`, 'utf16le');
  return order === 'le' ? body : body.swap16();
}
function utf32(text: string, order: 'le' | 'be'): Uint8Array {
  const points = [0xfeff, ...[...text].map((char) => char.codePointAt(0)!)];
  const out = Buffer.alloc(points.length * 4);
  points.forEach((point, i) => (order === 'le' ? out.writeUInt32LE(point, 4 * i) : out.writeUInt32BE(point, 4 * i)));
  return out;
}
const utf8Bom = (text: string): Uint8Array => Uint8Array.from([0xef, 0xbb, 0xbf, ...encode(text)]);

// Pseudo-random bytes with a format's real header in front: what the body of a compressed image,
// font or module looks like to a byte counter.
function noise(length: number, seed: number): number[] {
  let x = seed;
  return Array.from({ length }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x >>> 24;
  });
}
const binary = (head: number[], length = 8192, seed = 1): Uint8Array => Uint8Array.from([...head, ...noise(length - head.length, seed)]);
const ascii = (text: string): number[] => [...text].map((char) => char.charCodeAt(0));
const be32 = (value: number): number[] => [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];

const PNG = binary([
  0x89,
  ...ascii('PNG\r\n\x1a\n'),
  ...be32(13),
  ...ascii('IHDR'),
  ...be32(640),
  ...be32(480),
  8,
  6,
  0,
  0,
  0,
  ...be32(0x1234),
  ...be32(8000),
  ...ascii('IDAT'),
]);
const JPEG = binary([0xff, 0xd8, 0xff, 0xe0, 0, 16, ...ascii('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xdb, 0, 0x43, 0]);
// WebAssembly: magic, version, and a type section of small LEB128 numbers full of zeros.
const WASM = Uint8Array.from([0, ...ascii('asm'), 1, 0, 0, 0, ...Array.from({ length: 2000 }, (_, i) => [1, 0x60, i % 3, 0x7f, 0][i % 5]!), ...noise(6000, 2)]);
// TrueType: an offset table and table records, whose big-endian fields hold many zeros.
const TTF = Uint8Array.from([
  0,
  1,
  0,
  0,
  0,
  12,
  0,
  128,
  0,
  3,
  0,
  32,
  ...ascii('cmap'),
  ...be32(0x12345678),
  ...be32(204),
  ...be32(1000),
  ...ascii('glyf'),
  ...be32(0x9abcdef0),
  ...be32(1204),
  ...be32(5000),
  ...noise(8000, 3),
]);
const WOFF2 = binary([...ascii('wOF2'), 0, 1, 0, 0, ...be32(20000), 0, 12, 0, 0, ...be32(50000), ...be32(15000)]);
const GZIP = binary([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
// 16-bit PCM audio of a quiet signal: small samples, so zeros on both sides.
const WAV = Uint8Array.from([
  ...ascii('RIFF'),
  0,
  0x20,
  0,
  0,
  ...ascii('WAVEfmt '),
  16,
  0,
  0,
  0,
  1,
  0,
  1,
  0,
  0x44,
  0xac,
  0,
  0,
  0x88,
  0x58,
  1,
  0,
  2,
  0,
  16,
  0,
  ...ascii('data'),
  0,
  0x20,
  0,
  0,
  ...Array.from({ length: 8000 }, (_, i) => (i % 2 === 0 ? Math.round(8 * Math.sin(i / 20)) & 255 : Math.sin(i / 20) < 0 ? 255 : 0)),
]);

const CONFIG = '# deploy settings\r\nregion = "eu-west-1"\r\nbucket = "my-site"\r\n';
const CYRILLIC = 'Настройки развёртывания: регион и корзина.\n'.repeat(20);
const CJK = '配置文件，请勿提交到公共仓库。\n'.repeat(20);

describe('detectTextEncoding', () => {
  it.each(
    (
      [
        ['ASCII', encode(CONFIG), 'utf-8'],
        ['UTF-8 with accents and emoji', encode('café 日本 😀\r\n'.repeat(100)), 'utf-8'],
        ['UTF-8 with a byte-order mark', utf8Bom(CONFIG), 'utf-8'],
        ['an empty file', new Uint8Array(), 'utf-8'],
        ['UTF-16LE with a mark (PowerShell, Notepad "Unicode")', utf16(CONFIG, 'le'), 'utf-16le'],
        ['UTF-16BE with a mark', utf16(CONFIG, 'be'), 'utf-16be'],
        ['UTF-16LE without a mark', utf16(CONFIG, 'le', false), 'utf-16le'],
        ['UTF-16BE without a mark', utf16(CONFIG, 'be', false), 'utf-16be'],
        ['UTF-16LE Cyrillic prose without a mark', utf16(CYRILLIC, 'le', false), 'utf-16le'],
        ['UTF-16BE Chinese prose without a mark', utf16(CJK, 'be', false), 'utf-16be'],
        ['UTF-16LE with an odd byte at the end', Uint8Array.from([...utf16(CONFIG, 'le', false), 0x41]), 'utf-16le'],
        ['UTF-32LE with a mark', utf32(CONFIG, 'le'), 'utf-32le'],
        ['UTF-32BE with a mark', utf32(CONFIG, 'be'), 'utf-32be'],
        // Random bytes after a mark read as rare CJK characters and get scanned, which costs a scan only.
        [
          'a UTF-16 mark before control characters',
          Uint8Array.from([0xff, 0xfe, ...Array.from({ length: 4000 }, (_, i) => (i % 2 === 0 ? 1 + (i % 7) : 0))]),
          undefined,
        ],
        ['a PNG image', PNG, undefined],
        ['a JPEG image', JPEG, undefined],
        ['a WebAssembly module', WASM, undefined],
        ['a TrueType font', TTF, undefined],
        ['a WOFF2 font', WOFF2, undefined],
        ['gzip data', GZIP, undefined],
        ['16-bit audio', WAV, undefined],
        ['a single NUL byte', Uint8Array.from([0]), undefined],
        ['a NUL in 8-bit text', Uint8Array.from([...encode('a = 1\n'.repeat(50)), 0, ...encode('b = 2\n')]), undefined],
      ] as Array<[string, Uint8Array, string | undefined]>
    ).map(([name, bytes, expected]) => [name, expected ?? 'binary', bytes, expected] as const),
  )('reads %s as %s', (_name, _shown, bytes, expected) => {
    expect(detectTextEncoding(bytes)).toBe(expected);
  });
});

describe('decodeText', () => {
  const text = `${CONFIG}ключ = "значение" 😀\r\n`;
  it.each<[string, Uint8Array, string | undefined]>([
    ['UTF-8', encode(text), text],
    ['UTF-8 with a mark, kept as U+FEFF', utf8Bom(text), `\ufeff${text}`],
    ['UTF-16LE with a mark', utf16(text, 'le'), text],
    ['UTF-16BE with a mark', utf16(text, 'be'), text],
    ['UTF-16LE without a mark', utf16(text, 'le', false), text],
    ['UTF-16BE without a mark', utf16(text, 'be', false), text],
    ['UTF-16LE with an odd byte at the end', Uint8Array.from([...utf16(text, 'le'), 0x41]), text],
    ['UTF-32LE with a mark', utf32(text, 'le'), text],
    ['UTF-32BE with a mark', utf32(text, 'be'), text],
    ['a PNG image', PNG, undefined],
  ])('decodes %s', (_name, bytes, expected) => {
    expect(decodeText(bytes)).toBe(expected);
  });

  it('leaves the bytes it decodes as they were', () => {
    const bytes = utf16(text, 'be');
    const copy = Buffer.from(bytes);
    decodeText(bytes);
    expect(bytes).toEqual(copy);
  });

  it('decodes a subarray of a larger buffer from its own offset', () => {
    const outer = Buffer.concat([Buffer.from('xyz'), utf16(text, 'le'), Buffer.from('tail')]);
    const bytes = outer.subarray(3, outer.length - 4);
    expect(decodeText(bytes)).toBe(text);
  });
});

describe('looksLikeText (8-bit text)', () => {
  it.each([
    ['ASCII', encode('<!doctype html><p>hi</p>\n'), true],
    ['UTF-8 with accents and emoji', encode('café 日本 😀\r\n'.repeat(100)), true],
    ['an empty file', new Uint8Array(), true],
    ['tabs and ANSI colours', encode('\tx\u001b[31mred\u001b[0m\f'), true],
    ['Latin-1 text', Uint8Array.from([...encode('caf'), 0xe9, ...encode(' cr'), 0xe8, ...encode('me br'), 0xfb, ...encode('l'), 0xe9, 0x2e]), true],
    ['a NUL byte', Uint8Array.from([0x61, 0x00, 0x62]), false],
    ['a PNG header', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), false],
    ['UTF-16 text (left to detectTextEncoding)', Uint8Array.from([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]), false],
    ['random high bytes', Uint8Array.from({ length: 4096 }, (_, i) => 0x80 + ((i * 37) % 0x7f)), false],
    ['control characters', Uint8Array.from({ length: 100 }, (_, i) => 1 + (i % 7)), false],
    ['a NUL after 8 KB', Uint8Array.from([...encode('a'.repeat(8192)), 0]), true],
    ['a character cut at 8 KB', Uint8Array.from([...encode('a'.repeat(8191)), ...encode('é')]), true],
  ])('judges %s as text: %s', (_name, bytes, expected) => {
    expect(looksLikeText(bytes)).toBe(expected);
  });
});
