import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, api, visit } from '../api/api-helpers.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { useTestServer } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Issue 24, defect 1: a plan change made by the operator reaches the account's sites at once —
 * their plan, limits, history reach and badge — not only the account's own record. The change is
 * made as an operator makes it, with the admin CLI in another process.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
const DAY_MS = 24 * 3600_000;
let clock = Date.now();

function setPlan(email: string, plan: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, 'admin', 'account', 'set-plan', '--email', email, '--plan', plan],
      { env: { ...process.env, PLINTH_DATA_DIR: server.dataDir } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

/** Polls the served page until `test` holds (the CLI's change reaches the serving threads' caches). */
async function servedUntil(name: string, test: (html: string) => boolean): Promise<string> {
  let html = '';
  await waitUntil(async () => test((html = (await visit(server, name)).text)), 10_000);
  return html;
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.json\` (npm test does) first`);
});

const server = useTestServer({}, { now: () => clock });

describe('a plan change', () => {
  it('moves every site the account owns to the new plan: limits, history reach and badge', async () => {
    const owner = await accountWithToken(server.store, 'free');
    const deploy = (site: string | undefined, base: string | undefined, files: Array<[string, string | Uint8Array]>) =>
      api(server, {
        method: 'POST',
        path: site ? `/v1/deploy?site=${site}` : '/v1/deploy',
        token: owner.token,
        raw: tgzBytes(files),
        headers: base ? { 'x-base-revision': base } : {},
      });
    const page = '<!doctype html><html lang="en"><head><title>t</title></head><body><h1>plans</h1></body></html>';
    const first = await deploy(undefined, undefined, [['index.html', page]]);
    expect(first.status, first.text).toBe(201);
    const name = first.json.site.name as string;
    const second = await deploy(name, first.json.revision.id, [['index.html', page.replace('plans', 'plans 2')]]);
    expect(second.status).toBe(201);
    expect(await servedUntil(name, (html) => html.includes('data-plinth-badge'))).toContain('data-plinth-badge');

    // Eight days on, the Free plan's 7-day reach shows only the live revision.
    clock += 8 * DAY_MS;
    const revisions = async (): Promise<number[]> =>
      ((await api(server, { path: `/v1/sites/${name}/revisions`, token: owner.token })).json.revisions as Array<{ number: number }>).map((r) => r.number);
    expect(await revisions()).toEqual([2]);
    const big = randomBytes(Math.round(5.8 * 1024 * 1024));
    const refused = await deploy(name, second.json.revision.id, [
      ['index.html', page],
      ['big.bin', big],
    ]);
    expect(refused.status).toBe(413);

    await setPlan(owner.account.email, 'builder');

    expect((await api(server, { path: '/v1/me', token: owner.token })).json.plan).toBe('builder');
    const site = (await api(server, { path: `/v1/sites/${name}`, token: owner.token })).json;
    expect(site).toMatchObject({ plan: 'builder', badge: false });
    expect(await servedUntil(name, (html) => !html.includes('data-plinth-badge'))).not.toContain('data-plinth-badge');
    expect(await revisions()).toEqual([2, 1]);
    const allowed = await deploy(name, second.json.revision.id, [
      ['index.html', page],
      ['big.bin', big],
    ]);
    expect(allowed.status, allowed.text).toBe(201);

    // And back: the site follows the account down again.
    await setPlan(owner.account.email, 'free');
    expect((await api(server, { path: `/v1/sites/${name}`, token: owner.token })).json).toMatchObject({ plan: 'free', badge: true });
    expect(await servedUntil(name, (html) => html.includes('data-plinth-badge'))).toContain('data-plinth-badge');
  });

  it('leaves sites the account only co-owns or is a member of on their own owner’s plan', async () => {
    const owner = await accountWithToken(server.store, 'free');
    const other = await accountWithToken(server.store, 'free');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>shared</h1>' }] },
    });
    const name = created.json.site.name as string;
    await server.store.setMember(server.store.getSite(name)!.id, other.account.id, 'owner');
    await setPlan(other.account.email, 'company');
    expect((await api(server, { path: `/v1/sites/${name}`, token: other.token })).json.plan).toBe('free');
  });
});
