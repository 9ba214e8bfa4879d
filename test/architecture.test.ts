import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const AREAS = [
  'rules',
  'contract',
  'outbound',
  'http',
  'badge',
  'store',
  'serve',
  'ingest',
  'sites',
  'api',
  'app',
  'mcp',
  'cli',
  'web',
  'docs',
  'runtime',
] as const;
// The root modules every area may use (besides its own folder and node built-ins).
const SHARED = ['config.ts', 'errors.ts', 'log.ts'];
// An area's second entry, and the one area that may use it instead of the index: the ingest
// threads open the blob store alone, without loading LMDB or the PostgreSQL client.
const SIDE_ENTRIES: Record<string, string> = { 'store/blobs-entry.ts': 'ingest' };
// Which other areas each area may import, always through that area's index.ts.
const ALLOWED: Record<string, readonly string[]> = {
  // Pure domain rules (plans, roles, content types, paths, e-mail, expiry): nothing of ours.
  rules: [],
  // The wire shapes and their schemas: a leaf that the operations, the edges and the ingest worker read.
  contract: ['rules'],
  // What the service sends out (mail, client metadata fetches, DNS lookups), injected into the operations.
  outbound: ['rules'],
  // The uWS edge kit: request copies, routing, bodies, writers.
  http: ['rules'],
  // Placing the badge in a page: CPU work that both serving threads and ingest workers run.
  badge: ['rules'],
  store: ['rules'],
  serve: ['store', 'http', 'rules', 'badge'],
  ingest: ['store', 'rules', 'badge', 'contract'],
  // The operations never reach an edge or uWS; edges reach the store only for read-only views.
  sites: ['store', 'ingest', 'rules', 'contract', 'outbound'],
  api: ['sites', 'store', 'http', 'rules', 'contract'],
  app: ['sites', 'store', 'web', 'http', 'rules', 'contract'],
  mcp: ['sites', 'store', 'http', 'rules', 'contract'],
  cli: ['sites', 'store', 'ingest', 'rules', 'contract', 'outbound'],
  // The shared page kit (layout, stylesheet, script, icon) answers by the HTTP rules every host
  // shares, and compresses its files in the codings the rules name.
  web: ['http', 'rules'],
  docs: ['web', 'sites', 'http', 'rules', 'contract'],
  // Process wiring: starts threads and composes every area.
  runtime: ['rules', 'contract', 'outbound', 'http', 'badge', 'store', 'serve', 'ingest', 'sites', 'api', 'app', 'mcp', 'web', 'docs'],
};
// Surfaces that answer requests or people; none may reach into another.
const EDGES = ['api', 'mcp', 'app', 'docs', 'cli'];
// The composition root: the only root file that wires areas together.
const ROOTS = new Set(['main.ts']);

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
      expect(area === 'rules', `rules import nothing of ours, but ${path} imports ${target}`).toBe(false);
      if (targetArea === undefined) {
        expect(SHARED, `${path} imports ${target}`).toContain(target);
        continue;
      }
      expect(area !== undefined && ALLOWED[area]!.includes(targetArea), `${path} may not import ${target}`).toBe(true);
      if (SIDE_ENTRIES[target] === area) continue;
      expect(target, `${path} must import ${targetArea} through its index.ts`).toBe(`${targetArea}/index.ts`);
    }
  });

  it('keeps the contract a leaf: the rules and the error catalogue, nothing else of ours', () => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === 'contract')) {
      for (const target of localImports(file)) {
        const inside = areaOf(target) === 'contract' || target === 'rules/index.ts' || target === 'errors.ts';
        expect(inside, `${path} → ${target}`).toBe(true);
      }
    }
  });

  // Type-only imports count too: a circle of types is still two modules that cannot be read apart.
  it('has no import circle, inside an area or across areas', () => {
    const graph = new Map(files.map(({ file, path }) => [path, localImports(file)]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (path: string, trail: string[]): void => {
      if (state.get(path) === 'done' || !graph.has(path)) return;
      if (state.get(path) === 'open') {
        circles.push([...trail.slice(trail.indexOf(path)), path].join(' → '));
        return;
      }
      state.set(path, 'open');
      for (const target of graph.get(path)!) visit(target, [...trail, path]);
      state.set(path, 'done');
    };
    for (const path of graph.keys()) visit(path, []);
    expect(circles).toEqual([]);
  });

  // A thread stopped while LMDB's native part registers takes the whole process down (a napi
  // fatal error), and a pool closed as a thread starts stops it: the threads must not load it.
  it('keeps LMDB and the PostgreSQL client out of the ingest threads', () => {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (path: string): void => {
      if (seen.has(path)) return;
      seen.add(path);
      const file = join(SRC, path);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^(import type|import|export)\s[^;]*?from\s+'([^'.][^']*)'/gms)) if (m[1] !== 'import type') packages.add(m[2]!);
      for (const target of localImports(file, { valuesOnly: true })) visit(target);
    };
    visit('ingest/worker.ts');
    expect(seen.size).toBeGreaterThan(5);
    expect([...packages].filter((name) => name === 'lmdb' || name === 'pg' || name.startsWith('@aws-sdk/'))).toEqual([]);
  });

  it('keeps the operations free of any transport', () => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === 'sites')) {
      for (const target of localImports(file)) expect(target.startsWith('http/'), `${path} → ${target}`).toBe(false);
      expect(readFileSync(file, 'utf8'), path).not.toMatch(/from 'uWebSockets\.js'/);
    }
  });

  // Mail, client metadata fetches and DNS lookups are outbound's, injected through OperationsDeps.
  it('lets no operation open a connection or build an outbound adapter itself', () => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === 'sites')) {
      const text = readFileSync(file, 'utf8');
      expect(text, path).not.toMatch(/from '(node:(net|dns|dns\/promises|http|https|http2|tls|dgram)|nodemailer|undici)'/);
      expect(text, path).not.toMatch(/\b(createMailer|createClientMetadataFetcher|createTxtLookup)\(/);
    }
  });

  it.each(EDGES.flatMap((edge) => EDGES.filter((other) => other !== edge).map((other) => [edge, other])))('lets no %s module import %s', (edge, other) => {
    for (const { file, path } of files.filter(({ path }) => areaOf(path) === edge)) {
      for (const target of localImports(file)) expect(target.startsWith(`${other}/`), `${path} imports ${target}`).toBe(false);
    }
  });

  it('keeps the root modules free of area imports (the rules aside)', () => {
    for (const { file, path } of files) {
      if (areaOf(path) || ROOTS.has(path)) continue;
      for (const target of localImports(file)) expect(['rules/index.ts', undefined], `${path} → ${target}`).toContain(areaOf(target) && target);
    }
  });

  it('leaves only the composition root and the shared modules at the root of src/', () => {
    const loose = files.filter(({ path }) => !path.includes('/')).map(({ path }) => path);
    expect(loose.sort()).toEqual([...ROOTS, ...SHARED].sort());
  });
});

// The plinth CLI installs on its own (docs/cli.md "Install"): nothing of the server's, and one
// package, undici, for the load suite's generator.
const CLI_PACKAGES = ['undici'];

describe('the plinth CLI package (packages/cli)', () => {
  const CLI_SRC = fileURLToPath(new URL('../packages/cli/src', import.meta.url));
  const cliFiles = sourceFiles(CLI_SRC).map((file) => [relative(CLI_SRC, file), file] as const);
  const manifest = JSON.parse(readFileSync(new URL('../packages/cli/package.json', import.meta.url), 'utf8')) as Record<string, unknown>;

  it('finds its sources', () => {
    expect(cliFiles.length).toBeGreaterThan(5);
  });

  // undici is the load suite's alone: the other commands use node:http(s).
  it.each(cliFiles)('%s imports only node built-ins, its own modules and (the load suite) its dependencies', (path, file) => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...[...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!),
      ...[...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!),
    ];
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) {
        expect(relative(CLI_SRC, resolve(dirname(file), specifier)).startsWith('..'), `${path} imports ${specifier}, outside packages/cli/src`).toBe(false);
      } else if (!(path.startsWith('load/') && CLI_PACKAGES.includes(specifier))) {
        expect(specifier, `${path} imports ${specifier}`).toMatch(/^node:/);
      }
    }
  });

  // The load suite talks to Plinth only over HTTP, like any outside client: only the CLI's
  // entry point loads it, and it uses nothing else of the CLI.
  it('keeps the load suite in its folder: nothing of the CLI outside src/load imports it, and it imports nothing outside it', () => {
    const load = cliFiles.filter(([path]) => path.startsWith('load/'));
    expect(load.length).toBeGreaterThan(5);
    for (const [path, file] of cliFiles) {
      const relatives = [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\(\s*)'(\.[^']+)'/g)].map((m) =>
        relative(CLI_SRC, resolve(dirname(file), m[1]!)),
      );
      if (path.startsWith('load/')) for (const target of relatives) expect(target.startsWith('load/'), `${path} → ${target}`).toBe(true);
      else if (path !== 'plinth.ts') for (const target of relatives) expect(target.startsWith('load/'), `${path} → ${target}`).toBe(false);
    }
  });

  it('depends on undici alone (the load suite), and on nothing of the server', () => {
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(CLI_PACKAGES);
    // Inside its package file, so that file installs with no registry in reach.
    expect(manifest.bundleDependencies).toEqual(CLI_PACKAGES);
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
  });
});
