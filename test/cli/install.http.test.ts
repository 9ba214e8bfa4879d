import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { unreachableAdvice } from '../../packages/cli/src/server-address.js';
import type { LoadReport } from '../../packages/cli/src/load/report.js';
import { accountWithToken } from '../api/api-helpers.js';
import { extractBlocks } from '../docs/example-runner.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * The plinth CLI is a package of its own (packages/cli): installed as docs/cli.md says, on a
 * machine where it is not, with no network: from the checkout's folder into a fresh global folder
 * (a temporary --prefix), and as the tarball `npm pack` makes into a clean folder elsewhere. Then
 * `plinth` is used from a folder outside the checkout against a real server.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cliGuide = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
const installSection = cliGuide.slice(cliGuide.indexOf('## Install'), cliGuide.indexOf('\n## ', cliGuide.indexOf('## Install') + 1));
/** The server's heavy modules: none may come with the CLI. */
const SERVER_MODULES = ['uWebSockets.js', 'lmdb', 'pg', '@aws-sdk', 'piscina', 'parse5'];

let home: string;
let bin: string;
/** The tarball's install: its folder and its `plinth`. */
let tarballInstall: { dir: string; plinth: string } | undefined;

/** The environment of a fresh shell: no npm script variables, no Plinth settings but the ones given. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm_|PLINTH_|XDG_CONFIG_HOME$)/i.test(name)) env[name] = value;
  return { ...env, HOME: home, PATH: `${bin}:${process.env.PATH}`, ...extra };
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Bytes under a folder, links not followed (as `du` counts an install). */
function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sum + folderBytes(path);
    return sum + lstatSync(path).size;
  }, 0);
}

/** Every package name under a node_modules folder, scoped ones as `@scope/name`. */
function installedPackages(modules: string): string[] {
  if (!existsSync(modules)) return [];
  return readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name]));
}

const server = useTestServer();

beforeAll(async () => {
  home = tempDir('plinth-install-');
  bin = join(home, 'global', 'bin');
});

describe('installing the plinth CLI', () => {
  it('is what docs/cli.md gives: the folder in the checkout, or the tarball npm pack makes', () => {
    const commands = extractBlocks(installSection)
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => block.code.split('\n').map((line) => line.replace(/\s+#.*$/, '')));
    expect(commands).toContain('npm install -g ./packages/cli');
    expect(commands).toContain('npm pack -w packages/cli');
    expect(commands).toContain('npm install -g ./plinth-cli-0.1.0.tgz');
    expect(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')).toContain('"version": "0.1.0"');
  });

  it('installs from the checkout with no network, and plinth then deploys from any folder to the server on PLINTH_PORT', async () => {
    // The documented command, with a private global folder instead of the machine's, and offline.
    const installed = await run('npm', ['install', '-g', './packages/cli', '--prefix', join(home, 'global'), '--offline', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: cleanEnv({}),
    });
    expect(installed.status, installed.stderr).toBe(0);
    expect(existsSync(join(bin, 'plinth'))).toBe(true);

    const project = join(home, 'elsewhere', 'my-site');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'index.html'), '<h1>Hello</h1>\n');
    const help = await run('plinth', ['--help'], { cwd: project, env: cleanEnv({}) });
    expect(help.stdout).toContain('http://api.localhost:$PLINTH_PORT');

    const deployed = await run('plinth', ['deploy', '.'], { cwd: project, env: cleanEnv({ PLINTH_PORT: String(server.port) }) });
    expect(deployed.status, deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/^Published revision 1: /);
    expect(JSON.parse(readFileSync(join(project, '.service.json'), 'utf8')).site_token).toMatch(/^st_/);
  });

  it('packs into a tarball that installs into a clean folder offline in seconds, under 15 MB, and deploys', async () => {
    const packs = tempDir('plinth-pack-');
    // The tests' set-up has built dist/; the prepack build is skipped so no other test meets a
    // half-written file, and only its first step runs: undici copied where npm pack bundles it from.
    const bundled = await run(process.execPath, [join(ROOT, 'scripts/bundle-cli-deps.mjs')], { cwd: ROOT, env: cleanEnv({}) });
    expect(bundled.status, bundled.stderr).toBe(0);
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs], {
      cwd: join(ROOT, 'packages/cli'),
      env: cleanEnv({}),
    });
    expect(packed.status, packed.stderr).toBe(0);
    const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    expect(report!.filename).toBe('plinth-cli-0.1.0.tgz');
    const paths = report!.files.map((file) => file.path);
    expect(paths).toContain('dist/plinth.js');
    expect(paths).toContain('package.json');
    // Built JavaScript and the bundled undici only: no sources, no maps, no tests.
    expect(paths).toContain('dist/load/worker.js');
    // The load suite's HTTP client comes inside (bundled), so the file installs with no registry.
    expect(paths).toContain('node_modules/undici/package.json');
    expect(paths.filter((path) => !/^(dist\/(load\/)?[a-z-]+\.js|package\.json|README\.md|node_modules\/undici\/.*)$/.test(path))).toEqual([]);

    // Elsewhere: a clean folder, no checkout in reach, no network.
    const elsewhere = tempDir('plinth-clean-');
    const started = performance.now();
    const installed = await run('npm', ['install', join(packs, report!.filename), '--offline', '--no-audit', '--no-fund'], {
      cwd: elsewhere,
      env: cleanEnv({}),
    });
    const seconds = (performance.now() - started) / 1000;
    expect(installed.status, installed.stderr).toBe(0);
    expect(seconds).toBeLessThan(30);
    const modules = join(elsewhere, 'node_modules');
    expect(installedPackages(modules)).toEqual(['@plinth/cli']);
    // undici, the load suite's HTTP client, comes inside it; nothing else comes along.
    expect(installedPackages(join(modules, '@plinth', 'cli', 'node_modules'))).toEqual(['undici']);
    for (const heavy of SERVER_MODULES) expect(existsSync(join(modules, heavy)), heavy).toBe(false);
    expect(folderBytes(modules)).toBeLessThan(15 * 1024 * 1024);

    const plinth = join(modules, '.bin', 'plinth');
    tarballInstall = { dir: elsewhere, plinth };
    const help = await run(plinth, ['--help'], { cwd: elsewhere, env: cleanEnv({}) });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('plinth login');
    expect(help.stdout).toContain('plinth deploy [dir]');

    const site = join(elsewhere, 'site');
    mkdirSync(join(site, 'deep', 'er'), { recursive: true });
    writeFileSync(join(site, 'index.html'), '<h1>From the tarball</h1>\n');
    // A path past ustar's 100-byte name field goes in a pax header: the server reads it whole.
    const long = `deep/er/${'a'.repeat(120)}.txt`;
    writeFileSync(join(site, long), 'long name\n');
    const deployed = await run(plinth, ['deploy', 'site', '--json'], { cwd: elsewhere, env: cleanEnv({ PLINTH_PORT: String(server.port) }) });
    expect(deployed.status, deployed.stderr).toBe(0);
    const answer = JSON.parse(deployed.stdout) as { site: { name: string }; revision: { number: number; files: number } };
    expect(answer.revision).toMatchObject({ number: 1, files: 2 });
    const state = JSON.parse(readFileSync(join(site, '.service.json'), 'utf8')) as { site: string; site_token: string };
    const listed = await request({
      port: server.port,
      host: 'api.localhost',
      path: `/v1/sites/${state.site}/files`,
      headers: { Authorization: `Bearer ${state.site_token}` },
    });
    expect(listed.text).toContain(long);
  });

  it('runs plinth load from the tarball: its help, a corpus prepared through the API, and a short run against the server', async () => {
    expect(tarballInstall, 'the tarball test installs it').toBeDefined();
    const { dir, plinth } = tarballInstall!;
    const help = await run(plinth, ['load', '--help'], { cwd: dir, env: cleanEnv({}) });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: plinth load <command>');
    expect(help.stdout).toContain('run --corpus FILE');

    const { token } = await accountWithToken(server.store, 'builder');
    const env = cleanEnv({ PLINTH_TOKEN: token });
    const args = ['load', 'prepare', '--api', `http://api.localhost:${server.port}`, '--sites', '2', '--scale', '0.01', '--corpus', 'corpus.json'];
    const prepared = await run(plinth, args, { cwd: dir, env });
    expect(prepared.status, prepared.stderr).toBe(0);
    expect(prepared.stdout).toMatch(/^published 2 sites/);

    const address = `127.0.0.1:${server.port}`;
    const ran = await run(
      plinth,
      [
        'load',
        'run',
        '--corpus',
        'corpus.json',
        '--connect',
        address,
        '--duration',
        '2s',
        '--connections',
        '4',
        '--threads',
        '1',
        '--check',
        '1',
        '--json',
        'result.json',
      ],
      { cwd: dir, env },
    );
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`${address}: `);
    const report = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as LoadReport;
    expect(report.generator.threads).toBe(1);
    expect(report.overall.requests).toBeGreaterThan(10);
    expect(report.overall.checked_bodies).toBeGreaterThan(0);
    expect(report.overall.errors.total, JSON.stringify(report.overall.errors)).toBe(0);
  }, 60_000);

  it("leaves the server's plinth to start and admin, and has it say where the client commands are", async () => {
    const project = tempDir('plinth-server-cli-');
    const told = await run(process.execPath, [join(ROOT, 'dist/cli/plinth.js'), 'deploy', '.'], { cwd: project, env: cleanEnv({}) });
    expect(told.status).toBe(2);
    expect(told.stderr).toContain('packages/cli');
    expect(told.stderr).toContain('npm install -g ./packages/cli');
    // The load suite ships with the CLI, not the server.
    const load = await run(process.execPath, [join(ROOT, 'dist/cli/plinth.js'), 'load', 'help'], { cwd: project, env: cleanEnv({}) });
    expect(load.status).toBe(2);
    expect(load.stderr).toContain('"plinth load" is a command of the plinth CLI');
    const help = await run(process.execPath, [join(ROOT, 'dist/cli/plinth.js'), '--help'], { cwd: project, env: cleanEnv({}) });
    expect(help.stdout).toContain('plinth start');
    expect(help.stdout).toContain('plinth admin');
    expect(help.stdout).not.toContain('plinth load <command>');
    // And the CLI, asked for the server's commands, says where those run.
    const admin = await run(process.execPath, [join(ROOT, 'packages/cli/dist/plinth.js'), 'admin', 'help'], { cwd: project, env: cleanEnv({}) });
    expect(admin.status).toBe(2);
    expect(admin.stderr).toContain('npx plinth admin');
  });

  it('says which address it tried, which setting chose it, and what to set, when nothing answers', async () => {
    const project = tempDir('plinth-unreachable-');
    writeFileSync(join(project, 'index.html'), 'x');
    const cli = join(ROOT, 'packages/cli/dist/plinth.js');
    const byPort = await run(process.execPath, [cli, 'deploy', '.'], { cwd: project, env: cleanEnv({ PLINTH_PORT: '9' }) });
    expect(byPort.status).toBe(1);
    expect(byPort.stderr).toContain('could not reach the API at http://api.localhost:9');
    expect(byPort.stderr).toContain('comes from PLINTH_PORT');
    expect(byPort.stderr).toContain('PLINTH_API_URL');
    const byUrl = await run(process.execPath, [cli, 'deploy', '.'], { cwd: project, env: cleanEnv({ PLINTH_API_URL: 'http://127.0.0.1:9' }) });
    expect(byUrl.status).toBe(1);
    expect(byUrl.stderr).toContain('comes from PLINTH_API_URL');
  });

  it.each([
    ['default', /PLINTH_PORT.*npm start|npm start[\s\S]*PLINTH_PORT/],
    ['PLINTH_PORT', /PLINTH_PORT/],
    ['PLINTH_API_URL', /PLINTH_API_URL/],
    ['--api', /--api/],
    ['login', /plinth login/],
  ] as const)('advises on an unreachable API chosen by %s', (from, pattern) => {
    expect(unreachableAdvice('http://api.localhost:8080', from).join('\n')).toMatch(pattern);
  });
});
