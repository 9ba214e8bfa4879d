import { describe, expect, it } from 'vitest';
import { parseFormHead } from '../../src/app/upload.js';

const B = 'XyZ';
const field = (name: string, value: string): string => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, filename: string): string =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/gzip\r\n\r\n`;
const end = `--${B}--\r\n`;

describe('parseFormHead (the fields before a form’s file)', () => {
  it.each([
    ['token, then the archive', field('csrf', 'tok') + file('archive', 's.tgz') + 'BYTES', false, { csrf: 'tok' }, true],
    [
      'token and base revision, then the archive',
      field('csrf', 'tok') + field('base_revision', 'rev_1') + file('archive', 's.tgz'),
      false,
      { csrf: 'tok', base_revision: 'rev_1' },
      true,
    ],
    ['the archive first', file('archive', 's.tgz') + 'BYTES' + field('csrf', 'tok'), false, {}, true],
    ['another file first', file('other', 'x.bin') + 'BYTES', false, {}, true],
    ['an empty archive input is read past', field('csrf', 'tok') + file('archive', '') + '\r\n' + end, true, { csrf: 'tok' }, false],
    ['fields only', field('csrf', 'tok') + end, true, { csrf: 'tok' }, false],
    ['the first of a repeated field', field('csrf', 'one') + field('csrf', 'two') + file('archive', 's.tgz'), false, { csrf: 'one' }, true],
    [
      'padding after a delimiter',
      `--${B} \t\r\nContent-Disposition: form-data; name="csrf"\r\n\r\ntok\r\n` + file('archive', 'a.zip'),
      false,
      { csrf: 'tok' },
      true,
    ],
    ['a value with CRLF inside', field('note', 'a\r\nb') + file('archive', 'a.zip'), false, { note: 'a\r\nb' }, true],
  ])('%s', (_name, text, ended, fields, fileFollows) => {
    const head = parseFormHead(Buffer.from(text), B, 'archive', ended);
    expect(head && Object.fromEntries(head.fields)).toEqual(fields);
    expect(head?.fileFollows).toBe(fileFollows);
  });

  it.each([
    ['nothing yet', ''],
    ['half a delimiter', `--X`],
    ['a delimiter without its line end', `--${B}`],
    ['part headers not yet ended', `--${B}\r\nContent-Disposition: form-data; name="csrf"`],
    ['a field not yet ended', `${field('csrf', 'tok').slice(0, -4)}`],
    ['the token, then half of the next part headers', field('csrf', 'tok') + `--${B}\r\nContent-Disposition: form-data; name="arch`],
  ])('waits for more after %s', (_name, text) => {
    expect(parseFormHead(Buffer.from(text), B, 'archive', false)).toBeUndefined();
  });

  it.each([
    ['a body that ends before its last part', field('csrf', 'tok'), true, 'ended before its last part'],
    ['a part without a name', `--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n` + end, true, 'has no name'],
    ['text after a delimiter', `--${B}junk\r\n`, false, 'not valid multipart'],
    ['a field over 4 KB', field('csrf', 'x'.repeat(5000)) + file('archive', 's.tgz'), false, 'too long'],
    ['a field over 4 KB still arriving', `--${B}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${'x'.repeat(5000)}`, false, 'too long'],
    ['part headers over 8 KB', `--${B}\r\nContent-Disposition: form-data; name="csrf"\r\nX-Pad: ${'p'.repeat(9000)}`, false, 'not valid multipart'],
  ])('refuses %s', (_name, text, ended, message) => {
    expect(() => parseFormHead(Buffer.from(text), B, 'archive', ended)).toThrow(message);
  });
});
