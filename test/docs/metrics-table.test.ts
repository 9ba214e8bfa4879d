import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The metrics table of docs/operating.md against the code: an operator writes alerts from the
 * label values it lists, so `plinth_rate_limited_total`'s `cap` values are every cap the code
 * counts (the scope of each rate check in src/, up to its first colon), and no other.
 */

const root = new URL('../../', import.meta.url);
const guide = readFileSync(new URL('docs/operating.md', root), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The caps of rate checks in src/: `cap(\`name:…\`, …)` and `{ scope: \`name:…\`, limit, … }`. */
const countedCaps = new Set(
  sourceFiles(fileURLToPath(new URL('src/', root))).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/(?:\bcap\(|\bscope: )`([a-z][a-z-]*):\$\{/g)].map((match) => match[1]!),
  ),
);

/** The `cap` values the row of `plinth_rate_limited_total` lists, in its parentheses. */
function documentedCaps(): string[] {
  const row = guide.split('\n').find((line) => line.startsWith('| `plinth_rate_limited_total` |'));
  expect(row, 'a row for plinth_rate_limited_total').toBeDefined();
  const list = /`cap` \(([^)]*)\)/.exec(row!)?.[1];
  expect(list, 'the row lists the cap values in parentheses').toBeDefined();
  return [...list!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

describe('the metrics table (docs/operating.md)', () => {
  it('finds the rate checks of the code', () => {
    // The scan itself: a cap counted by the server and one counted per site.
    expect(countedCaps).toContain('api-network');
    expect(countedCaps).toContain('site-password');
  });

  it('lists every cap plinth_rate_limited_total counts, and no other', () => {
    expect(documentedCaps().sort()).toEqual([...countedCaps].sort());
  });
});
