import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployCommand } from '../../packages/cli/src/deploy.js';
import { writeTree } from '../fixtures/archives.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { accountWithToken } from '../api/api-helpers.js';
import { hashToken } from '../../src/store/index.js';
import { useTestServer } from '../helpers/fixtures.js';
import { runCli } from './run-cli.js';

const server = useTestServer();

describe('plinth deploy', () => {
  it('publishes a folder, keeps .service.json out of git, and updates the same site next time', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>first</h1>', 'node_modules/x/index.js': 'never sent' });
    writeFileSync(join(dir, '.gitignore'), 'dist');
    const lines: string[] = [];
    const apiUrl = `http://api.localhost:${server.port}`;

    expect(await deployCommand({ dir, apiUrl, out: (line) => lines.push(line) })).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as {
      site: string;
      url: string;
      revision: string;
      site_token: string;
      claim_url: string;
    };
    expect(state.site).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect(state.site_token).toMatch(/^st_/);
    // The claim link is printed once; the folder keeps it too, as the agent guide's recipe does.
    expect(state.claim_url).toMatch(/\/claim\/ct_/);
    expect(lines.join('\n')).toContain(state.claim_url);
    expect(state.url).toBe(`http://${state.site}.sites.localhost`);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('dist\n.service.json\n');
    expect(lines[0]).toContain('Published revision 1');

    writeTree(dir, { 'index.html': '<h1>second</h1>' });
    expect(await deployCommand({ dir, apiUrl, out: (line) => lines.push(line) })).toBe(0);
    const next = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string; site_token: string; claim_url: string };
    expect(next.site).toBe(state.site);
    expect(next.site_token).toBe(state.site_token);
    expect(next.claim_url).toBe(state.claim_url);
    expect(next.revision).not.toBe(state.revision);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('dist\n.service.json\n');
    const page = await request({ port: server.port, host: `${state.site}.sites.localhost` });
    expect(page.text).toContain('second');
  });

  it('reports a refused deploy and exits non-zero', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'readme.txt': 'no index' });
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: `http://api.localhost:${server.port}`, out: (line) => lines.push(line) })).toBe(1);
    expect(lines.join('\n')).toContain('400 bad_request');
  });

  it.each([
    ['does not exist', (dir: string) => join(dir, 'my-sit'), 'no such folder'],
    ['is a file', (dir: string) => (writeTree(dir, { 'index.html': 'x' }), join(dir, 'index.html')), 'not a folder'],
  ])('exits with status 2 and one line naming the path when the folder %s, sending nothing', async (_what, pathIn, words) => {
    const path = pathIn(tempDir('plinth-cli-'));
    const run = await runCli(server.port, ['deploy', path]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toEqual([`plinth: ${words}: ${path} (plinth deploy publishes a folder; nothing was sent)`]);
  });

  it('prints every reference that leads nowhere, on its own line, after the answer', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>links</h1>\n<img src="missing.png">', 'docs/index.html': '<a href="../gone.html">x</a>' });
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: `http://api.localhost:${server.port}`, out: (line) => lines.push(line) })).toBe(0);
    expect(lines.filter((line) => line.startsWith('warning:'))).toEqual([
      'warning: docs/index.html:1: ../gone.html leads nowhere',
      'warning: index.html:2: missing.png leads nowhere',
    ]);
  });
});

describe('plinth deploy, as people and scripts use it', () => {
  const apiUrl = () => `http://api.localhost:${server.port}`;

  it('shows packing and upload progress on a terminal, and ends by clearing it', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>progress</h1>', 'big.txt': randomBytes(300_000).toString('base64') });
    const status: Array<string | undefined> = [];
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: (line) => lines.push(line), status: (line) => status.push(line) })).toBe(0);
    expect(status[0]).toMatch(/^Reading /);
    expect(status.some((line) => line?.startsWith('Packed '))).toBe(true);
    expect(status.some((line) => line?.startsWith('Uploading ['))).toBe(true);
    expect(status.at(-1)).toBeUndefined();
    expect(lines[0]).toMatch(/^Published revision 1: http:\/\//);
  });

  it('redeploys sending only the files that changed', async () => {
    const dir = tempDir('plinth-cli-');
    const big = randomBytes(400_000).toString('base64');
    writeTree(dir, { 'index.html': '<h1>v1</h1>', 'big.txt': big, 'css/site.css': 'body{}' });
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined })).toBe(0);

    writeTree(dir, { 'index.html': '<h1>v2</h1>' });
    const status: Array<string | undefined> = [];
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: (line) => lines.push(line), status: (line) => status.push(line) })).toBe(0);
    expect(status).toContain('Checking which of 3 files changed…');
    const changed = status.find((line) => line?.includes(' files changed ('));
    expect(changed).toMatch(/^1 of 3 files changed \(11 B\)/);
    expect(lines[0]).toMatch(/^Published revision 2: /);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string };
    expect((await request({ port: server.port, host: `${state.site}.sites.localhost` })).text).toContain('v2');
    expect((await request({ port: server.port, host: `${state.site}.sites.localhost`, path: '/big.txt' })).text).toBe(big);

    // Nothing changed: nothing is uploaded, and a new revision is still published.
    status.length = 0;
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined, status: (line) => status.push(line) })).toBe(0);
    expect(status).toContain('Nothing changed in the files; publishing…');

    // --full uploads the whole folder.
    status.length = 0;
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined, status: (line) => status.push(line), full: true })).toBe(0);
    expect(status.some((line) => line?.startsWith('Packed 3 files'))).toBe(true);
  });

  it('prints the API answer with --json', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>json</h1>' });
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: apiUrl(), json: true, out: (line) => lines.push(line) })).toBe(0);
    const answer = JSON.parse(lines.join('\n'));
    expect(answer.site.name).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect(answer.site_token).toMatch(/^st_/);
  });

  it('tells the person to use an API token once the site was claimed, then deploys with one', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>mine</h1>' });
    const lines: string[] = [];
    await deployCommand({ dir, apiUrl: apiUrl(), json: true, out: (line) => lines.push(line) });
    const created = JSON.parse(lines.join('\n')) as { claim_url: string };
    const { account, token } = await accountWithToken(server.store, 'builder');
    const claimToken = created.claim_url.split('/').pop()!;
    expect((await server.store.claimSite(hashToken(claimToken), account.id)).ok).toBe(true);

    const errors: string[] = [];
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined, err: (line) => errors.push(line) })).toBe(1);
    expect(errors.join('\n')).toContain('has been claimed');
    expect(errors.join('\n')).toContain('--token pl_');

    expect(await deployCommand({ dir, apiUrl: apiUrl(), token, out: () => undefined })).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8'));
    expect(state.site_token).toBeUndefined();
  });
});

describe('plinth sites, revisions and rollback', () => {
  const run = (args: string[], env: Record<string, string> = {}) => runCli(server.port, args, { env });

  it('lists, rolls back by number, and keeps .service.json on the new revision', async () => {
    const { token } = await accountWithToken(server.store, 'builder');
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>one</h1>' });
    expect((await run(['deploy', dir], { PLINTH_TOKEN: token })).status).toBe(0);
    writeTree(dir, { 'index.html': '<h1>two</h1>' });
    const second = await run(['deploy', dir], { PLINTH_TOKEN: token });
    expect(second.status).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.stdout).toMatch(/^Published revision 2: /);

    const revisions = JSON.parse((await run(['revisions', dir, '--json'], { PLINTH_TOKEN: token })).stdout) as { revisions: Array<{ number: number }> };
    expect(revisions.revisions.map((r) => r.number)).toEqual([2, 1]);
    const rollback = await run(['rollback', '1', dir], { PLINTH_TOKEN: token });
    expect(rollback.status).toBe(0);
    expect(rollback.stdout).toContain('Rolled back: revision 3 is live');
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string };
    const page = await request({ port: server.port, host: `${state.site}.sites.localhost` });
    expect(page.text).toContain('one');
    const sites = JSON.parse((await run(['sites', '--json'], { PLINTH_TOKEN: token })).stdout) as { sites: Array<{ name: string }> };
    expect(sites.sites.map((site) => site.name)).toEqual([state.site]);
    // The next deploy builds on the rollback: no conflict.
    expect((await run(['deploy', dir], { PLINTH_TOKEN: token })).status).toBe(0);
  });

  it('stores a draft with --draft, shows its preview, and promotes it; a stale folder is refused', async () => {
    const { token } = await accountWithToken(server.store, 'builder');
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>live</h1>' });
    expect((await run(['deploy', dir], { PLINTH_TOKEN: token })).status).toBe(0);
    const before = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string };
    writeTree(dir, { 'index.html': '<h1>draft</h1>' });
    const draft = await run(['deploy', '--draft', dir], { PLINTH_TOKEN: token });
    expect(draft.status).toBe(0);
    expect(draft.stdout).toContain(`Stored draft revision 2 (not live): http://2--${before.site}.sites.localhost`);
    expect(draft.stdout).toContain('plinth promote 2');
    // The folder's base stays the live revision.
    expect(JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')).revision).toBe(before.revision);
    expect((await request({ port: server.port, host: `${before.site}.sites.localhost` })).text).toContain('live');
    expect((await request({ port: server.port, host: `2--${before.site}.sites.localhost` })).text).toContain('draft');
    const listed = await run(['revisions', dir], { PLINTH_TOKEN: token });
    expect(listed.stdout).toMatch(/^2 +rev_\S+ +deploy +draft /m);
    expect(listed.stdout).toMatch(/^1\* +rev_\S+ +deploy +live /m);

    const promoted = await run(['promote', '2', dir], { PLINTH_TOKEN: token });
    expect(promoted.status).toBe(0);
    expect(promoted.stdout).toContain('Promoted: revision 2 is live');
    expect((await request({ port: server.port, host: `${before.site}.sites.localhost` })).text).toContain('draft');

    // A folder whose live revision is stale cannot promote over someone else's publish.
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ ...before }));
    const stale = await run(['promote', '1', dir], { PLINTH_TOKEN: token });
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('409');
  });

  it('deletes a revision that is not live with revisions delete, by number or id, and refuses the live one', async () => {
    const { token } = await accountWithToken(server.store, 'builder');
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>live</h1>' });
    expect((await run(['deploy', dir], { PLINTH_TOKEN: token })).status).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string };
    // Two drafts, stored as `deploy --draft` stores them (that command is tested above).
    const drafts: string[] = [];
    for (const html of ['<h1>mistake</h1>', '<h1>another draft</h1>']) {
      const entry = await server.store.blobs.putFile(Buffer.from(html), 'text/html; charset=utf-8', { compress: false });
      const result = await server.store.commitRevision({
        site: state.site,
        baseRevision: state.revision,
        files: new Map([['index.html', entry]]),
        kind: 'deploy',
        createdBy: 'test',
        publish: false,
      });
      if (!result.ok) throw new Error(result.reason);
      drafts.push(result.revision.id);
    }

    const deleted = await run(['revisions', 'delete', '2', dir], { PLINTH_TOKEN: token });
    expect(deleted.status).toBe(0);
    expect(deleted.stdout).toContain(`Deleted revision 2 of ${state.site}`);
    expect((await request({ port: server.port, host: `2--${state.site}.sites.localhost` })).status).toBe(410);
    const byId = await run(['revisions', 'delete', drafts[1]!, dir, '--json'], { PLINTH_TOKEN: token });
    expect(byId.status).toBe(0);
    expect(JSON.parse(byId.stdout)).toMatchObject({ revision: { id: drafts[1], number: 3 }, deleted: true });
    expect(server.store.listRevisions(server.store.getSite(state.site)!.id).revisions.map((r) => r.number)).toEqual([1]);

    const live = await run(['revisions', 'delete', '1', dir], { PLINTH_TOKEN: token });
    expect(live.status).toBe(1);
    expect(live.stderr).toContain('409 conflict');
    expect(live.stderr).toContain('roll back');
    expect((await request({ port: server.port, host: `${state.site}.sites.localhost` })).text).toContain('live');
  });

  it.each([
    [['revisions', 'delete'], 2],
    [['revisions', 'delete', '1', 'a', 'b'], 2],
    [['promote'], 2],
    [['rollback'], 2],
    [['sites'], 2],
    [['deploy', 'a', 'b'], 2],
    [['frobnicate'], 2],
    [['deploy', '--bogus'], 2],
    [['revisions', '/nonexistent-folder'], 2],
  ])('exits %j with status %i and the usage', async (args, status) => {
    const result = await run(args, { PLINTH_TOKEN: '' });
    expect(result.status).toBe(status);
    expect(result.stderr).toContain('Usage:');
  });

  it('exits 1 when the API cannot be reached', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': 'x' });
    const result = await run(['deploy', dir, '--api', 'http://127.0.0.1:9']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('could not reach the API');
  });
});
