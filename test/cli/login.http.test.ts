import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, type TestContext } from 'vitest';
import { appUrlFor } from '../../packages/cli/src/login.js';
import { accountWithToken } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/sites.js';

/**
 * `plinth login`, `logout` and `whoami`. The account app's side of the device grant is another
 * piece of work: here a small authorization server on loopback speaks RFC 8628 and RFC 7009 by
 * the book, and hands out a real API token of an account on the real test server, so the token the
 * command keeps is then used for real (`whoami`, `sites`).
 */

const CLI = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** What the fake authorization server answers each poll of the token endpoint, in order. */
type Poll = 'pending' | 'slow_down' | 'approve' | 'denied' | 'expired';

interface FakeAuthorizationServer {
  port: number;
  url: string;
  /** The next grant's poll answers, and the token it hands out on approval. */
  script: (polls: Poll[], token: string) => void;
  asked: Array<Record<string, string>>;
  polls: Array<{ at: number; form: Record<string, string> }>;
  revoked: Array<Record<string, string>>;
  close: () => Promise<void>;
}

async function readForm(req: IncomingMessage): Promise<Record<string, string> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return undefined;
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

async function startAuthorizationServer(): Promise<FakeAuthorizationServer> {
  let polls: Poll[] = [];
  let token = '';
  const deviceCode = `dc_${randomBytes(16).toString('hex')}`;
  const fake: Omit<FakeAuthorizationServer, 'port' | 'url' | 'close'> = {
    script: (next, issued) => {
      polls = [...next];
      token = issued;
    },
    asked: [],
    polls: [],
    revoked: [],
  };
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const app = `http://${req.headers.host}`;
    void (async () => {
      if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
        return send(200, {
          issuer: app,
          token_endpoint: `${app}/oauth/token`,
          device_authorization_endpoint: `${app}/oauth/device_authorization`,
          revocation_endpoint: `${app}/oauth/revoke`,
          grant_types_supported: [DEVICE_GRANT],
        });
      }
      const form = await readForm(req);
      if (req.method !== 'POST' || !form) return send(400, { error: 'invalid_request' });
      if (req.url === '/oauth/device_authorization') {
        fake.asked.push(form);
        if (form.client_id !== 'plinth-cli') return send(401, { error: 'invalid_client' });
        return send(200, {
          device_code: deviceCode,
          user_code: 'WDJB-MJHT',
          verification_uri: `${app}/device`,
          verification_uri_complete: `${app}/device?user_code=WDJB-MJHT`,
          expires_in: 600,
          interval: 1,
        });
      }
      if (req.url === '/oauth/token') {
        fake.polls.push({ at: Date.now(), form });
        if (form.grant_type !== DEVICE_GRANT || form.client_id !== 'plinth-cli') return send(400, { error: 'unsupported_grant_type' });
        if (form.device_code !== deviceCode) return send(400, { error: 'invalid_grant' });
        const next = polls.shift() ?? 'expired';
        if (next === 'approve') return send(200, { access_token: token, token_type: 'Bearer' });
        const error = { pending: 'authorization_pending', slow_down: 'slow_down', denied: 'access_denied', expired: 'expired_token' }[next];
        return send(400, { error });
      }
      if (req.url === '/oauth/revoke') {
        fake.revoked.push(form);
        res.writeHead(200).end();
        return;
      }
      send(404, { error: 'not_found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    ...fake,
    port,
    url: `http://app.localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  } as FakeAuthorizationServer;
}

const server = useTestServer();

/**
 * An authorization server of the test's own, closed when it ends: each scripts its grant's polls,
 * so the tests run at the same time (most of their time is the command waiting its interval).
 * Concurrent tests take their hooks and `expect` from their context, which knows the test.
 */
async function authorizationServer({ onTestFinished }: TestContext): Promise<FakeAuthorizationServer> {
  const auth = await startAuthorizationServer();
  onTestFinished(() => auth.close());
  return auth;
}

function plinth(args: string[], env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(PLINTH_|XDG_CONFIG_HOME$)/.test(name)) clean[name] = value;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...clean, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.concurrent('plinth login (RFC 8628 device authorization grant)', { timeout: 60_000 }, () => {
  it('asks for a code, shows where to approve it, polls until approved, and keeps the token private', async (context) => {
    const { expect } = context;
    const auth = await authorizationServer(context);
    const { account, token } = await accountWithToken(server.store, 'builder');
    auth.script(['pending', 'pending', 'approve'], token);
    const config = tempDir('plinth-xdg-');
    const env = { XDG_CONFIG_HOME: config, HOME: tempDir('plinth-home-') };
    const api = `http://api.localhost:${server.port}`;
    const started = Date.now();
    const login = await plinth(['login', '--api', api, '--app', auth.url], env);
    expect(login.status, login.stderr).toBe(0);

    expect(auth.asked.at(-1)).toEqual({ client_id: 'plinth-cli', device_name: `plinth CLI on ${hostname()}` });
    expect(login.stderr).toContain(`${auth.url}/device?user_code=WDJB-MJHT`);
    expect(login.stderr).toContain('WDJB-MJHT');
    // Three polls at the server's interval of a second: never faster.
    const polls = auth.polls.filter((poll) => poll.at >= started);
    expect(polls).toHaveLength(3);
    for (const poll of polls) expect(poll.form).toMatchObject({ grant_type: DEVICE_GRANT, client_id: 'plinth-cli' });
    for (let i = 1; i < polls.length; i++) expect(polls[i]!.at - polls[i - 1]!.at).toBeGreaterThanOrEqual(950);
    expect(login.stdout).toContain(`Signed in as ${account.email}`);

    const file = join(config, 'plinth', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'plinth')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ api_url: api, app_url: auth.url, token });

    // Every command now uses it, on the API it signed in to, with no --api, --token or PLINTH_TOKEN.
    const whoami = await plinth(['whoami'], env);
    expect(whoami.status, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(account.email);
    const sites = await plinth(['sites'], env);
    expect(sites.status, sites.stderr).toBe(0);
    expect(sites.stdout).toContain('No sites yet');

    // Another API never gets it.
    const elsewhere = await plinth(['whoami', '--api', 'http://api.localhost:9'], env);
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toContain('Not signed in');

    const logout = await plinth(['logout'], env);
    expect(logout.status, logout.stderr).toBe(0);
    expect(auth.revoked.at(-1)).toMatchObject({ token, token_type_hint: 'access_token' });
    expect(existsSync(file)).toBe(false);
    const after = await plinth(['whoami'], env);
    expect(after.status).toBe(1);
    expect(after.stderr).toContain('plinth login');
  });

  it('waits five seconds longer after slow_down', async (context) => {
    const { expect } = context;
    const auth = await authorizationServer(context);
    const { token } = await accountWithToken(server.store, 'builder');
    auth.script(['slow_down', 'approve'], token);
    const started = Date.now();
    const config = tempDir('plinth-xdg-');
    const login = await plinth(['login', '--api', `http://api.localhost:${server.port}`, '--app', auth.url], { XDG_CONFIG_HOME: config });
    expect(login.status, login.stderr).toBe(0);
    const polls = auth.polls.filter((poll) => poll.at >= started);
    expect(polls).toHaveLength(2);
    // The interval was 1 s; slow_down makes it 6 s.
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(5900);
  }, 30_000);

  it.for([
    ['denied', 'access_denied', /denied/],
    ['expired', 'expired_token', /expired/],
  ] as const)('stops on %s (%s), says so, and saves nothing', async ([poll, , message], context) => {
    const { expect } = context;
    const auth = await authorizationServer(context);
    auth.script(['pending', poll], 'pl_never');
    const config = tempDir('plinth-xdg-');
    const login = await plinth(['login', '--api', `http://api.localhost:${server.port}`, '--app', auth.url], { XDG_CONFIG_HOME: config });
    expect(login.status).toBe(1);
    expect(login.stderr).toMatch(message);
    expect(login.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(existsSync(join(config, 'plinth', 'credentials.json'))).toBe(false);
  });

  it('finds the app next to the API, and asks for --app when it cannot', ({ expect }) => {
    expect(appUrlFor('http://api.localhost:8080')).toBe('http://app.localhost:8080');
    expect(appUrlFor('https://api.example.org/')).toBe('https://app.example.org');
    expect(appUrlFor('https://plinth.example.org')).toBeUndefined();
  });
});
