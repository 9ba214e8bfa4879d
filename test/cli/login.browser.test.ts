import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openPage, signIn, startAppServer, type AppServer } from '../app/browser.js';
import { whoAmI } from '../app/device-helpers.js';
import { writeTree } from '../fixtures/archives.js';
import { useBrowser } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';

/**
 * `plinth login` end to end: the CLI package's own build runs as a child process against the real
 * server on loopback, prints an address and a code, and a person signs in and approves (or
 * denies) in Chromium. The token it keeps is then what `whoami` and `deploy` use, and `logout`
 * revokes it on the server.
 */

const CLI = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));

let server: AppServer;
let counter = 0;
const email = (who: string): string => `${who}-${Date.now().toString(36)}${++counter}@example.com`;
const browser = useBrowser();

beforeAll(async () => {
  // The command polls at the interval the server announces: a second rather than five, so that
  // the test waits on the person, not on the clock.
  server = await startAppServer({ PLINTH_DEVICE_POLL_INTERVAL_S: '1' });
});
afterAll(async () => {
  await server?.close();
});

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** A clean environment: no PLINTH_* of the machine running the tests, its own config folder. */
function environment(config: string): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(PLINTH_|XDG_CONFIG_HOME$)/.test(name)) clean[name] = value;
  return { ...clean, XDG_CONFIG_HOME: config, HOME: tempDir('plinth-home-') };
}

/** Runs the CLI; `prompted` sees standard error as it comes (the address and code are printed before the wait). */
function plinth(args: string[], env: NodeJS.ProcessEnv, prompted?: (stderr: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill(), 80_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      prompted?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code ?? 1, stdout, stderr });
    });
  });
}

/** Starts `plinth login`; resolves with the address and code it printed, and the run's end. */
async function startLogin(env: NodeJS.ProcessEnv): Promise<{ address: string; code: string; done: Promise<Run> }> {
  let shown: (found: { address: string; code: string }) => void;
  const printed = new Promise<{ address: string; code: string }>((resolve) => (shown = resolve));
  const done = plinth(['login', '--api', server.apiUrl], env, (stderr) => {
    const address = stderr.match(/To sign in, open (\S+)/)?.[1];
    const code = stderr.match(/the code (\S+) before you approve/)?.[1];
    if (address && code) shown({ address, code });
  });
  const found = await Promise.race([printed, done.then((run) => Promise.reject(new Error(`plinth login ended early: ${run.stderr}`)))]);
  return { ...found, done };
}

describe.concurrent('plinth login, with a person approving in Chromium', () => {
  it('keeps the approved token privately; whoami and deploy use it; logout revokes it', { timeout: 120_000 }, async ({ expect }) => {
    const config = tempDir('plinth-xdg-');
    const env = environment(config);
    const { address, code, done } = await startLogin(env);
    expect(address).toBe(`${server.appUrl}/device?user_code=${encodeURIComponent(code)}`);

    const person = email('cli-login');
    const { context, page, errors } = await openPage(browser);
    await page.goto(address);
    await signIn(page, server, person);
    // The page names the device the CLI said it is, and shows the code the terminal printed.
    await expect.poll(() => page.getByRole('heading', { name: /^Approve “plinth CLI on / }).count()).toBe(1);
    expect(await page.getByText(code).count()).toBe(1);
    await page.getByRole('button', { name: /^Approve plinth CLI on / }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved');

    const login = await done;
    expect(login.status, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Signed in as ${person} to ${server.apiUrl}.`);
    const file = join(config, 'plinth', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'plinth')).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { api_url: string; app_url: string; token: string; device_name: string };
    expect(saved).toMatchObject({ api_url: server.apiUrl, app_url: server.appUrl });
    expect(saved.token).toMatch(/^pl_/);
    // The token is the account's, under the device's name, on the app's API tokens page.
    await page.goto(`${server.appUrl}/tokens`);
    expect(await page.getByRole('rowheader', { name: saved.device_name }).count()).toBe(1);

    const whoami = await plinth(['whoami'], env);
    expect(whoami.status, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(person);

    // A deploy with no --token publishes a site of the account.
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>from the terminal</h1>' });
    const deploy = await plinth(['deploy', dir], env);
    expect(deploy.status, deploy.stderr).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; site_token?: string };
    expect(state.site_token).toBeUndefined();
    const served = await request({ port: server.port, host: `${state.site}.sites.localhost` });
    expect(served.text).toContain('from the terminal');
    const sites = await plinth(['sites'], env);
    expect(sites.status, sites.stderr).toBe(0);
    expect(sites.stdout).toContain(state.site);

    const logout = await plinth(['logout'], env);
    expect(logout.status, logout.stderr).toBe(0);
    expect(logout.stdout).toContain('the token is revoked');
    expect((await whoAmI(server, saved.token)).status).toBe(401);
    const after = await plinth(['whoami'], env);
    expect(after.status).toBe(1);
    expect(after.stderr).toContain('run plinth login');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('exits non-zero with a clear message when the person denies, and keeps nothing', { timeout: 90_000 }, async ({ expect }) => {
    const config = tempDir('plinth-xdg-');
    const env = environment(config);
    const { address, done } = await startLogin(env);
    const { context, page, errors } = await openPage(browser);
    await page.goto(address);
    await signIn(page, server, email('cli-deny'));
    await expect.poll(() => page.getByRole('heading', { name: /^Approve “plinth CLI on / }).count()).toBe(1);
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Denied');

    const login = await done;
    expect(login.status).toBe(1);
    expect(login.stderr).toContain('The sign-in was denied in the browser; no token was issued, and nothing was saved.');
    expect(login.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(() => statSync(join(config, 'plinth', 'credentials.json'))).toThrow();
    expect(errors).toEqual([]);
    await context.close();
  });
});
