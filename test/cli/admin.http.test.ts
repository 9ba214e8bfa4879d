import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

// The built CLI, as `npx plinth` runs it; `npm test` builds before vitest.
const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function plinth(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, PLINTH_DATA_DIR: server.dataDir } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const serving = (name: string) => request({ port: server.port, host: `${name}.sites.localhost` });

async function statusWithin(name: string, status: number, ms: number): Promise<number> {
  let last = 0;
  await waitUntil(async () => (last = (await serving(name)).status) === status, ms);
  return last;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.json\` (npm test does) first`);
});
const server = useTestServer();

beforeAll(async () => {
  await publishSite(server.store, 'team-site', { 'index.html': '<h1>team</h1>' });
});

describe('plinth admin', () => {
  it('creates accounts (plan Free by default, plan names in any case) and refuses a registered e-mail', async () => {
    const [builder, free] = await Promise.all([
      plinth('admin', 'account', 'create', '--email', 'Owner@Example.com', '--plan', 'builder'),
      plinth('admin', 'account', 'create', '--email', 'viewer@example.com'),
    ]);
    expect(builder.code).toBe(0);
    const account = JSON.parse(builder.stdout) as Record<string, string>;
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/), email: 'owner@example.com', plan: 'builder', created_at: expect.any(String) });
    expect(new Date(account.created_at!).toISOString()).toBe(account.created_at);
    expect(JSON.parse(free.stdout)).toMatchObject({ email: 'viewer@example.com', plan: 'free' });

    expect(server.store.getAccountByEmail('owner@example.com')).toMatchObject({ id: account.id, plan: 'builder' });

    const duplicate = await plinth('admin', 'account', 'create', '--email', 'owner@example.com', '--plan', 'Team');
    expect(duplicate).toMatchObject({ code: 1, stdout: '' });
    expect(duplicate.stderr).toMatch(/^plinth: An account with e-mail owner@example.com already exists.\n$/);
    expect(server.store.getAccountByEmail('owner@example.com')?.plan).toBe('builder');
  });

  it('refuses an invalid e-mail, an unknown plan and an unknown account with exit 1', async () => {
    const [badEmail, badPlan, unknown] = await Promise.all([
      plinth('admin', 'account', 'create', '--email', 'not-an-address'),
      plinth('admin', 'account', 'create', '--email', 'x@example.com', '--plan', 'platinum'),
      plinth('admin', 'token', 'create', '--email', 'nobody@example.com'),
    ]);
    expect(badEmail).toMatchObject({ code: 1, stderr: expect.stringContaining('plinth: "not-an-address" is not a valid e-mail address') });
    expect(badPlan).toMatchObject({ code: 1, stderr: expect.stringContaining('Free, Prompter, Builder, Team, Company') });
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'plinth: There is no account with e-mail nobody@example.com.\n' });
    expect(server.store.getAccountByEmail('x@example.com')).toBeUndefined();
  });

  it('creates an API token, prints it once and stores only its hash', async () => {
    const result = await plinth('admin', 'token', 'create', '--email', 'owner@example.com', '--name', 'ci');
    expect(result.code).toBe(0);
    const token = result.stdout.trim();
    expect(result.stdout).toBe(`${token}\n`);
    // pl_ + 32 random bytes in base64url: 256 bits.
    expect(token).toMatch(/^pl_[A-Za-z0-9_-]{43}$/);
    expect(result.stderr).toContain('cannot be shown again');

    const account = server.store.getAccountByEmail('owner@example.com')!;
    expect(server.store.findToken(hashToken(token))).toMatchObject({ kind: 'api', accountId: account.id, name: 'ci' });

    // Never lock.mdb: closing any descriptor of it drops this process's fcntl locks, and the next
    // LMDB opener would then take the server's reader slots for a dead process's and clear them.
    const files = filesUnder(server.dataDir).filter((file) => !file.endsWith('lock.mdb'));
    expect(files.some((file) => file.endsWith('data.mdb'))).toBe(true);
    const bytes = files.map((file) => readFileSync(file));
    expect(bytes.some((b) => b.includes(hashToken(token)))).toBe(true);
    expect(bytes.some((b) => b.includes(token) || b.includes(token.slice(3)))).toBe(false);
  });

  it('changes an account plan', async () => {
    const result = await plinth('admin', 'account', 'set-plan', '--email', 'viewer@example.com', '--plan', 'Company');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ email: 'viewer@example.com', plan: 'company' });
    expect(server.store.getAccountByEmail('viewer@example.com')?.plan).toBe('company');
  });

  it('adds an existing account to a site, and refuses an unknown site or account', async () => {
    const [added, noSite, noAccount] = await Promise.all([
      plinth('admin', 'member', 'add', '--site', 'team-site', '--email', 'viewer@example.com', '--role', 'viewer'),
      plinth('admin', 'member', 'add', '--site', 'no-such-site', '--email', 'viewer@example.com', '--role', 'viewer'),
      plinth('admin', 'member', 'add', '--site', 'team-site', '--email', 'nobody@example.com', '--role', 'editor'),
    ]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ site: 'team-site', email: 'viewer@example.com', role: 'viewer' });
    const site = server.store.getSite('team-site')!;
    expect(server.store.getRole(site.id, server.store.getAccountByEmail('viewer@example.com')!.id)).toBe('viewer');
    expect(noSite).toMatchObject({ code: 1, stderr: 'plinth: There is no site named no-such-site.\n' });
    expect(noAccount).toMatchObject({ code: 1, stderr: 'plinth: There is no account with e-mail nobody@example.com.\n' });
  });

  it('takes a site down (451 on the running server within 1.5 s) and restores it', async () => {
    expect((await serving('team-site')).status).toBe(200);

    const down = await plinth('admin', 'site', 'takedown', 'team-site');
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toMatchObject({ name: 'team-site', state: 'taken_down' });
    expect(await statusWithin('team-site', 451, 1500)).toBe(451);

    const up = await plinth('admin', 'site', 'restore', 'team-site');
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ name: 'team-site', state: 'active' });
    expect(await statusWithin('team-site', 200, 1500)).toBe(200);

    const unknown = await plinth('admin', 'site', 'takedown', 'no-such-site');
    expect(unknown).toMatchObject({ code: 1, stderr: 'plinth: There is no site named no-such-site.\n' });
  });

  it('keeps a deleted site deleted: no restore, no new members', async () => {
    await publishSite(server.store, 'gone-site', { 'index.html': '<h1>gone</h1>' });
    await server.store.setSiteState('gone-site', 'deleted');
    const [restore, member] = await Promise.all([
      plinth('admin', 'site', 'restore', 'gone-site'),
      plinth('admin', 'member', 'add', '--site', 'gone-site', '--email', 'viewer@example.com', '--role', 'viewer'),
    ]);
    expect(restore).toMatchObject({ code: 1, stdout: '', stderr: 'plinth: The site gone-site was deleted.\n' });
    expect(member).toMatchObject({ code: 1, stdout: '', stderr: 'plinth: The site gone-site was deleted.\n' });
    expect(server.store.getSite('gone-site')?.state).toBe('deleted');
    expect((await serving('gone-site')).status).toBe(410);
  });

  it('lists abuse reports and resolves one', async () => {
    const report = await server.store.createReport({ site: 'team-site', reason: 'spam', details: 'ads everywhere', network: '203.0.113.0/24' });
    const open = await plinth('admin', 'report', 'list');
    expect(open.code).toBe(0);
    const listed = open.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(listed).toContainEqual(expect.objectContaining({ id: report.id, site: 'team-site', reason: 'spam', status: 'open', contact: null }));

    const resolved = await plinth('admin', 'report', 'resolve', report.id, '--note', 'warned the owner');
    expect(resolved.code).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ id: report.id, status: 'resolved', note: 'warned the owner', resolved_at: expect.any(String) });
    expect((await plinth('admin', 'report', 'list')).stdout).not.toContain(report.id);
    expect((await plinth('admin', 'report', 'list', '--status', 'resolved')).stdout).toContain(report.id);

    const unknown = await plinth('admin', 'report', 'resolve', 'rep_nope');
    expect(unknown).toMatchObject({ code: 1, stderr: 'plinth: There is no report rep_nope.\n' });
  });

  it.each([
    [['admin'], 'admin needs a command'],
    [['admin', 'account', 'delete', '--email', 'a@example.com'], 'unknown admin command "account delete"'],
    [['admin', 'account', 'create', '--email', 'a@example.com', '--colour', 'red'], "Unknown option '--colour'"],
    [['admin', 'token', 'create'], '--email is required'],
    [['admin', 'site', 'takedown'], 'admin site takedown takes exactly one site name'],
  ])('answers %j with the usage text and exit 2', async (args, message) => {
    const result = await plinth(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`plinth: ${message}`);
    expect(result.stderr).toContain('Usage: plinth admin <command>');
  });

  it('prints the admin usage on help, exit 0', async () => {
    const result = await plinth('admin', 'help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('site takedown <name>');
  });
});
