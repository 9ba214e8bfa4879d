import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { unreachableAdvice } from '../../src/cli/server-address.js';
import { extractBlocks } from '../docs/example-runner.js';
import { tempDir } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * The install the guides give for the `plinth` command, run as a reader would on a machine where
 * it is not installed: in the checkout, into a fresh global folder (a temporary --prefix), with no
 * network; then `plinth` is used from a folder outside the checkout, finding the server on the
 * port it runs on.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cliGuide = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');

let home: string;
let bin: string;

/** The environment of a fresh shell: no npm script variables, no Plinth settings but the ones given. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm_|PLINTH_)/i.test(name)) env[name] = value;
  return { ...env, HOME: home, PATH: `${bin}:${process.env.PATH}`, ...extra };
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const server = useTestServer();

beforeAll(async () => {
  home = tempDir('plinth-install-');
  bin = join(home, 'global', 'bin');
});

describe('installing the plinth command', () => {
  it('is the command docs/cli.md gives, and the quick start points to it', () => {
    const section = cliGuide.slice(cliGuide.indexOf('## Install'), cliGuide.indexOf('\n## ', cliGuide.indexOf('## Install') + 1));
    const [install] = extractBlocks(section).filter((block) => block.lang === 'sh');
    expect(install?.code).toBe('npm install -g .');
    expect(section).toMatch(/in the Plinth checkout/);
    expect(readFileSync(join(ROOT, 'docs/quick-start.md'), 'utf8')).toContain('npm install -g .');
  });

  it('installs from the checkout with no network, and plinth then deploys from any folder to the server on PLINTH_PORT', async () => {
    // The documented command, with a private global folder instead of the machine's, and offline.
    const installed = await run('npm', ['install', '-g', '.', '--prefix', join(home, 'global'), '--offline', '--no-audit', '--no-fund'], {
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

  it('says which address it tried, which setting chose it, and what to set, when nothing answers', async () => {
    const project = tempDir('plinth-unreachable-');
    writeFileSync(join(project, 'index.html'), 'x');
    const cli = join(ROOT, 'dist/cli/plinth.js');
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
  ] as const)('advises on an unreachable API chosen by %s', (from, pattern) => {
    expect(unreachableAdvice('http://api.localhost:8080', from).join('\n')).toMatch(pattern);
  });
});
