import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { hashToken } from '../../src/store/index.js';
import { lineIo, printable } from '../../packages/cli/src/output.js';
import { accountWithToken } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { writeTree } from '../fixtures/archives.js';
import { tempDir } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

/** What the plinth CLI prints: to a reader that stops early, after a deploy, on a refusal, and around a status line. */

const CLI = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));
const server = useTestServer();
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, PLINTH_API_URL: `http://api.localhost:${server.port}`, ...extra });

function plinth(args: string[], extra: Record<string, string> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', env: env(extra) }, (err, stdout, stderr) =>
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs the CLI with its standard output read by a reader that has gone before the first line (`| head -1`, at its worst). */
function withClosedOutput(args: string[], extra: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    // The read end closes at once: every write the command makes meets a closed pipe (EPIPE).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describe('a reader that closes the pipe early', () => {
  it('plinth sites | head -1 and plinth revisions | head -2 end quietly, with no stack trace', async () => {
    const { token } = await accountWithToken(server.store, 'builder');
    const dir = tempDir('plinth-pipe-');
    for (let i = 0; i < 3; i++) {
      writeTree(dir, { 'index.html': `<h1>${i}</h1>` });
      expect((await plinth(['deploy', dir], { PLINTH_TOKEN: token })).status).toBe(0);
    }
    for (const args of [['sites'], ['revisions', dir]]) {
      for (let run = 0; run < 3; run++) {
        const piped = await withClosedOutput(args, { PLINTH_TOKEN: token });
        expect(piped.stderr, args.join(' ')).toBe('');
        expect(piped.status, args.join(' ')).toBe(0);
      }
    }
  });
});

describe('what plinth deploy prints', () => {
  it('one "Published" line, the claim link, and no advice to save the token it saved', async () => {
    const dir = tempDir('plinth-text-');
    writeTree(dir, { 'index.html': '<h1>hello</h1>' });
    const first = await plinth(['deploy', dir]);
    expect(first.status, first.stderr).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.includes('Published'))).toHaveLength(1);
    expect(lines[0]).toMatch(/^Published revision 1: http:\/\//);
    expect(first.stdout).toMatch(/open http:\/\/app\.localhost[^ ]*\/claim\/ct_\S+ and sign in/);
    expect(first.stdout).not.toMatch(/save it|keep the site_token/i);
    expect(first.stdout).toContain('.service.json: the next plinth deploy of the folder updates the site');

    writeTree(dir, { 'index.html': '<h1>hello again</h1>' });
    const second = await plinth(['deploy', dir]);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^Published revision 2: http:\/\/\S+$/)]);
  });

  it('says how many files the folder has when the service refuses too many', async () => {
    const dir = tempDir('plinth-many-');
    const files: Record<string, string> = { 'index.html': '<h1>many</h1>' };
    for (let i = 0; i < 120; i++) files[`page-${i}.html`] = `<p>${i}</p>`;
    writeTree(dir, files);
    const refused = await plinth(['deploy', dir]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('413 too_large');
    expect(refused.stderr).toContain('has 121 files');
    expect(() => readFileSync(join(dir, '.service.json'))).toThrow();
  });
});

describe('lines printed around the status line of a terminal', () => {
  it('clear it first and end with a newline, then the status line is drawn again below', () => {
    let screen = '';
    const stream = { write: (text: string) => void (screen += text), columns: 80 };
    const io = lineIo({ stdout: stream, stderr: stream, progress: true });
    io.status!('Reading big-site…');
    io.err('Resuming the upload of mf_1: 1.0 MB of 3.0 MB already there, sending the other 2.0 MB.');
    io.status!('Uploading [#####...]');
    io.status!(undefined);
    io.out('Published revision 1: http://x.sites.localhost');
    expect(screen).toBe(
      'Reading big-site…\r\x1b[2K' +
        'Resuming the upload of mf_1: 1.0 MB of 3.0 MB already there, sending the other 2.0 MB.\n' +
        'Reading big-site…\r\x1b[2KUploading [#####...]\r\x1b[2K' +
        'Published revision 1: http://x.sites.localhost\n',
    );
  });
});

describe("text from the service's answers", () => {
  it('reaches the terminal with its control characters written out, not as escape sequences', async () => {
    // A member whose address holds a terminal reset (ESC c) and a cursor-up-and-rewrite: an account
    // made before addresses were checked for control characters, or a service that sends them.
    const owner = await accountWithToken(server.store, 'builder');
    const dir = tempDir('plinth-escapes-');
    writeTree(dir, { 'index.html': '<h1>one</h1>' });
    expect((await plinth(['deploy', dir], { PLINTH_TOKEN: owner.token })).status).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string };
    const email = 'x\u001bc\u001b[1A\rok@example.com';
    const member = await server.store.createAccount({ email, plan: 'free' });
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await server.store.addApiToken({ accountId: member!.id, tokenHash: hashToken(token), name: 'test' });
    await server.store.setMember(server.store.getSite(state.site)!.id, member!.id, 'editor');
    const update = await deployTo(server.port, {
      token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>two</h1>']], { site: state.site, base_revision: state.revision }),
    });
    expect(update.status).toBe(201);
    const listed = await plinth(['revisions', dir], { PLINTH_TOKEN: owner.token });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(/[\u001b\r]/);
    expect(listed.stdout).toContain('x\\x1bc\\x1b[1a\\x0dok@example.com');
  });

  it('keeps line breaks and tabs, and writes out every other C0, DEL and C1 character', () => {
    expect(printable('a\tb\nc')).toBe('a\tb\nc');
    expect(printable('\u0000\u0007\u001b]52;c;aGk=\u0007\r\u007f\u009b2J')).toBe('\\x00\\x07\\x1b]52;c;aGk=\\x07\\x0d\\x7f\\x9b2J');
    let screen = '';
    const stream = { write: (text: string) => (screen += text), columns: 80 };
    const io = lineIo({ stdout: stream, stderr: stream, progress: true });
    io.status!('Pulling a\u001b[2Jb');
    io.err('Deploy failed (400 bad_request): \u001b]0;owned\u0007');
    expect(screen).toBe('Pulling a\\x1b[2Jb\r\u001b[2KDeploy failed (400 bad_request): \\x1b]0;owned\\x07\nPulling a\\x1b[2Jb');
  });
});
