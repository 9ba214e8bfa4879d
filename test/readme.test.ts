import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/errors.js';
import { toolSpecs } from '../src/mcp/tools.js';

/**
 * The README is short: what Plinth is, one deploy, the quick start, hosts, layout, how to test and
 * benchmark, and links. Every other fact has its home in docs/ or bench/, so the README must not
 * copy their tables, and its layout must match src/.
 */

const root = new URL('../', import.meta.url);
const rootDir = fileURLToPath(root);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const readme = read('README.md');
const guides = readdirSync(new URL('docs/', root)).filter((file) => file.endsWith('.md'));

describe('README', () => {
  it('stays short', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('repeats no row of a table in docs/', () => {
    const rows = new Set(
      guides.flatMap((file) =>
        read(`docs/${file}`)
          .split('\n')
          .filter((line) => line.startsWith('|') && !/^\|[-:| ]+\|$/.test(line)),
      ),
    );
    expect(readme.split('\n').filter((line) => rows.has(line))).toEqual([]);
  });

  it('holds neither the settings table nor the error table', () => {
    const codes = Object.keys(ERROR_STATUS);
    const offending = readme.split('\n').filter((line) => line.startsWith('| `PLINTH_') || codes.some((code) => line.startsWith(`| \`${code}\` |`)));
    expect(offending).toEqual([]);
  });

  it('quotes no benchmark figures: they live in bench/', () => {
    expect(readme.match(/\d[\d,.]*\s?(?:req\/s|k req|ms\b|MiB|×|%)/g) ?? []).toEqual([]);
  });

  it('has an MCP section: the protocol revisions served, the clients set up in docs/mcp.md, and every tool', () => {
    const section = /\n## MCP\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
    for (const revision of ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) expect(section).toContain(revision);
    for (const client of ['Claude', 'Cursor', 'VS Code']) expect(section).toContain(client);
    expect(section).toContain('](docs/mcp.md#connecting-an-app)');
    const listed = [...section.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(
      toolSpecs()
        .filter((tool) => !listed.includes(tool.name))
        .map((tool) => tool.name),
    ).toEqual([]);
  });

  it('says why the OAuth server is our own code rather than a library', () => {
    expect(readme).toContain('`oidc-provider`');
    expect(readme).toContain('`@node-oauth/oauth2-server`');
  });

  it('links every guide in docs/', () => {
    const linked = new Set([...readme.matchAll(/\]\(docs\/([a-z0-9-]+\.md)(?:#[^)]*)?\)/g)].map((m) => m[1]));
    expect(guides.filter((file) => !linked.has(file))).toEqual([]);
  });

  it('names every test and benchmark script of package.json', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const wanted = scripts.filter((name) => /^(test|bench:|reliability$|chaos(:cluster)?$|soak$)/.test(name));
    expect(wanted.filter((name) => !readme.includes(name === 'test' ? 'npm test' : `npm run ${name}`))).toEqual([]);
  });

  it('says which vitest projects npm test runs, as package.json runs them', () => {
    const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.test ?? '';
    const projects = [...read('vitest.config.ts').matchAll(/name: '([a-z]+)'/g)].map((m) => m[1]!);
    const run = [...script.matchAll(/--project ([a-z]+)/g)].map((m) => m[1]!);
    const said = (pattern: RegExp): string[] => {
      const words = pattern.exec(readme)?.[1] ?? '';
      return projects.filter((name) => new RegExp(`\\b${name}\\b`, 'i').test(words));
    };
    expect(run.length).toBeGreaterThan(0);
    expect(said(/`npm test` runs the ([^.;]*) projects/)).toEqual(projects.filter((name) => run.includes(name)));
    expect(said(/it does not run the ([^.;]*) projects/)).toEqual(projects.filter((name) => !run.includes(name)));
  });

  describe('project layout', () => {
    const block = /## Project layout\n+```text\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const named = [...block.matchAll(/^(src\/\S*)/gm)].map((m) => m[1]!);

    const directories = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .flatMap((entry) => [join(dir, entry.name), ...directories(join(dir, entry.name))]);

    it('names only paths that exist: folders as folders, files as files', () => {
      expect(named.length).toBeGreaterThan(5);
      for (const path of named) {
        const full = join(rootDir, path);
        expect(existsSync(full), path).toBe(true);
        expect(statSync(full).isDirectory(), `${path}: a folder ends in /, a file does not`).toBe(path.endsWith('/'));
      }
    });

    it('names every folder under src/', () => {
      const all = directories(join(rootDir, 'src')).map((dir) => `${relative(rootDir, dir).split('\\').join('/')}/`);
      expect(all.filter((dir) => !named.includes(dir)).sort()).toEqual([]);
    });

    it('names every file at the src/ root, and those are the entry, the config, the errors and the log alone', () => {
      const rootFiles = readdirSync(join(rootDir, 'src'), { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => `src/${entry.name}`)
        .sort();
      expect(rootFiles).toEqual(['src/config.ts', 'src/errors.ts', 'src/log.ts', 'src/main.ts']);
      expect(rootFiles.filter((file) => !named.includes(file))).toEqual([]);
    });
  });
});
