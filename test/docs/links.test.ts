import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { slugify } from '../../src/docs/markdown.js';

/**
 * Every relative link in README.md and docs/*.md points to a file that exists, and every
 * `#anchor` into a Markdown file to one of its headings (GitHub's ids, which the docs host uses too).
 */

const rootDir = fileURLToPath(new URL('../../', import.meta.url));
const files = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(join(rootDir, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
/** Served by the docs host beside the guides, not files in docs/. */
const DOCS_HOST_FILES = new Set(['llms.txt', 'llms-full.txt', 'openapi.json']);

/** Markdown link targets outside code. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

function headingIds(markdown: string): Set<string> {
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  const ids = new Set<string>();
  for (const [, text] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const id = slugify(text!.replace(/`/g, ''));
    let unique = id;
    for (let n = 1; ids.has(unique); n++) unique = `${id}-${n}`;
    ids.add(unique);
  }
  return ids;
}

describe('relative links', () => {
  it.each(files)('%s links only to files and headings that exist', (file) => {
    const text = readFileSync(join(rootDir, file), 'utf8');
    const problems: string[] = [];
    for (const link of links(text)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, fragment] = link.split('#') as [string, string | undefined];
      const target = path === '' ? join(rootDir, file) : join(dirname(join(rootDir, file)), decodeURI(path));
      if (!existsSync(target)) {
        if (file.startsWith('docs/') && DOCS_HOST_FILES.has(path)) continue;
        problems.push(`${link}: no such file`);
        continue;
      }
      if (fragment && target.endsWith('.md') && !headingIds(readFileSync(target, 'utf8')).has(fragment)) problems.push(`${link}: no such heading`);
    }
    expect(problems).toEqual([]);
  });
});

describe('SECURITY.md', () => {
  it('links every file of the attacker suite, each the proof of a defence', () => {
    const text = readFileSync(join(rootDir, 'SECURITY.md'), 'utf8');
    const suite = readdirSync(join(rootDir, 'test', 'security')).filter((file) => file.endsWith('.test.ts'));
    expect(suite.length).toBeGreaterThan(5);
    for (const file of suite) expect(text, file).toContain(`(test/security/${file})`);
  });
});
