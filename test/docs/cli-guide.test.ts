import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ADMIN_USAGE } from '../../src/cli/admin.js';

/** docs/cli.md against the plinth CLI's `plinth --help`, and the admin table of docs/operating.md against `plinth admin help`. */

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const cliGuide = read('docs/cli.md');
const operating = read('docs/operating.md');
// Built by `npm test` before vitest runs, like the CLI tests.
const help = execFileSync(process.execPath, [fileURLToPath(new URL('packages/cli/dist/plinth.js', root))], { encoding: 'utf8' });

/** First cells of a Markdown table's rows, code spans unwrapped. */
const firstCells = (markdown: string): string[] => [...markdown.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);

describe('the CLI guide (docs/cli.md)', () => {
  it('lists every command of plinth --help, and no other', () => {
    const commands = [...help.matchAll(/^ {2}plinth ([a-z]+)/gm)].map((m) => m[1]!);
    expect(commands.length).toBeGreaterThan(4);
    const documented = firstCells(cliGuide)
      .filter((cell) => cell.startsWith('plinth '))
      .map((cell) => cell.split(' ')[1]!);
    expect(documented.sort()).toEqual([...new Set(commands)].sort());
  });

  it('lists every option of plinth --help with the default --help states', () => {
    const options = new Map([...help.matchAll(/^ {2}--([a-z]+)[^\n]*?(?:\(default ([^;)]+)[;)])?$/gm)].map((m) => [m[1]!, m[2]]));
    expect(options.size).toBeGreaterThan(2);
    const rows = new Map([...cliGuide.matchAll(/^\| `--([a-z]+)[^`]*` \| ([^\n]+) \|$/gm)].map((m) => [m[1]!, m[2]!]));
    expect([...rows.keys()].sort()).toEqual([...options.keys()].sort());
    for (const [option, fallback] of options) {
      if (fallback === undefined) continue;
      // "$PLINTH_API_URL, else http://api.localhost:8080" in --help; the same words in code spans in the guide.
      for (const part of fallback.split(/,? else /)) expect(rows.get(option), `--${option}`).toContain(`\`${part.trim()}\``);
    }
  });
});

describe('the admin CLI table (docs/operating.md)', () => {
  it('lists every command of plinth admin help, and no other', () => {
    const commands = [...ADMIN_USAGE.matchAll(/^ {2}([a-z][a-z-]* (?:[a-z-]+|<[a-z]+>))/gm)].map((m) => m[1]!.replace(/ (<[a-z]+>|--[a-z-]+)$/, ''));
    const section = operating.slice(operating.indexOf('## The admin CLI'));
    const documented = firstCells(section).map((cell) => cell.split(/ (?=[-<[])/)[0]!);
    expect(documented.sort()).toEqual(commands.sort());
  });
});
