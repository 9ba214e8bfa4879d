import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_MEANING, ERROR_STATUS, type ErrorCode } from '../../src/errors.js';

/**
 * docs/errors.md has the one table of error codes. Its code, status and meaning columns are held
 * to the catalogue in src/errors.ts; no other guide repeats a row of it (test/readme.test.ts checks the
 * README).
 */

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const codes = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Rows whose first cell is an error code of the catalogue, split into cells. */
function errorRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => codes.some((code) => line.startsWith(`| \`${code}\` |`)))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

const rows = errorRows(read('docs/errors.md'));

describe('the error table (docs/errors.md)', () => {
  it('has one row per code of the catalogue, in its order', () => {
    expect(rows.map((cells) => cells[0])).toEqual(codes.map((code) => `\`${code}\``));
  });

  it.each(rows.map((cells) => [cells[0]!.replace(/`/g, '') as ErrorCode, cells] as const))(
    '%s: status and meaning are the catalogue’s, and it says what to do',
    (code, cells) => {
      expect(cells).toHaveLength(4);
      expect(Number(cells[1])).toBe(ERROR_STATUS[code]);
      expect(cells[2]).toBe(ERROR_MEANING[code]);
      expect(cells[3]!.length, 'what to do').toBeGreaterThan(10);
    },
  );

  it('exists once: no other guide has a row for an error code', () => {
    const others = readdirSync(new URL('docs/', root))
      .filter((file) => file.endsWith('.md') && file !== 'errors.md')
      .map((file) => `docs/${file}`);
    for (const file of others) expect(errorRows(read(file)), file).toEqual([]);
  });
});
