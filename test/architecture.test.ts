import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const AREAS = ['store', 'serve', 'ingest', 'sites', 'api', 'app', 'mcp', 'cli', 'web', 'docs'] as const;
// Top-level modules every area may use (besides its own folder and node built-ins).
const SHARED = ['config.ts', 'errors.ts', 'log.ts', 'http.ts', 'uws.ts', 'content-types.ts', 'site-paths.ts', 'plans.ts', 'upload-pacer.ts', 'client-network.ts', 'route-template.ts'];
// Which other areas each area may import, always through that area's index.ts.
const ALLOWED: Record<string, readonly string[]> = {
  store: [],
  serve: ['store'],
  ingest: ['store'],
  // The operations never reach an edge or uWS; edges reach the store only for read-only views.
  sites: ['store', 'ingest'],
  api: ['sites', 'store'],
  app: ['sites', 'store', 'web'],
  mcp: ['sites', 'store'],
  cli: ['sites', 'store', 'ingest'],
  // The shared page kit (layout, stylesheet, security headers) depends on nothing of ours.
  web: [],
  docs: ['web', 'sites'],
};
// Surfaces that answer requests or people; none may reach into another.
const EDGES = ['api', 'mcp', 'app', 'docs', 'cli'];
// Composition roots: the only files that wire areas together.
const ROOTS = new Set(['main.ts', 'server.ts', 'http-thread.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

function localImports(file: string, { valuesOnly = false } = {}): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(import type|import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)]
    .filter((m) => !(valuesOnly && m[1] === 'import type'))
    .map((m) => relative(SRC, resolve(dirname(file), m[2]!.replace(/\.js$/, '.ts'))));
}

const areaOf = (path: string): string | undefined => AREAS.find((area) => path.startsWith(`${area}/`));

describe('module boundaries', () => {
  const files = sourceFiles(SRC).map((file) => ({ file, path: relative(SRC, file) }));

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.filter(({ path }) => areaOf(path) !== undefined).map(({ file, path }) => [path, file]))('%s imports only what its area may', (path, file) => {
    const area = areaOf(path);
    for (const target of localImports(file)) {
      const targetArea = areaOf(target);
      if (targetArea === area) continue;
      expect(area, `store imports nothing of ours, but ${path} imports ${target}`).not.toBe('store');
      if (targetArea === undefined) {
        expect(SHARED, `${path} imports ${target}`).toContain(target);
        continue;
      }
      expect(area !== undefined && ALLOWED[area]!.includes(targetArea), `${path} may not import ${target}`).toBe(true);
      expect(target, `${path} must import ${targetArea} through its index.ts`).toBe(`${targetArea}/index.ts`);
    }
  });

  it('keeps the operations free of any transport', () => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === 'sites')) {
      for (const target of localImports(file)) expect(['http.ts', 'uws.ts', 'upload-pacer.ts'], `${path} → ${target}`).not.toContain(target);
      expect(readFileSync(file, 'utf8'), path).not.toMatch(/from 'uWebSockets\.js'/);
    }
  });

  it.each(EDGES.flatMap((edge) => EDGES.filter((other) => other !== edge).map((other) => [edge, other])))('lets no %s module import %s', (edge, other) => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === edge)) {
      for (const target of localImports(file)) expect(target.startsWith(`${other}/`), `${path} imports ${target}`).toBe(false);
    }
  });

  it('keeps shared top-level modules free of area imports (types of the store aside)', () => {
    for (const { file, path } of files) {
      if (areaOf(path) || ROOTS.has(path)) continue;
      for (const target of localImports(file, { valuesOnly: true })) expect(areaOf(target), `${path} → ${target}`).toBeUndefined();
      for (const target of localImports(file)) expect(['store/index.ts', undefined], `${path} → ${target}`).toContain(areaOf(target) && target);
    }
  });
});
