import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { createBlobStore } from '../../src/store/blob-store.js';
import { CACHE_STATE_FILE, currentBootId } from '../../src/store/bucket-cache-guard.js';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import type { AppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi, request, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Three Plinth processes, each with its own data directory, on one PostgreSQL and one bucket,
 * as three machines behind a load balancer: every node answers every host with the same public
 * addresses. What any node acknowledges, every node knows and serves; races between nodes have
 * one winner; a node that was killed catches up; an outage of PostgreSQL or of the bucket stops
 * what needs it and nothing else.
 */

const PUBLIC = {
  PLINTH_PUBLIC_APP_URL: 'http://app.localhost:8080',
  PLINTH_PUBLIC_API_URL: 'http://api.localhost:8080',
  PLINTH_PUBLIC_SITE_URL: 'http://{name}.sites.localhost:8080',
  PLINTH_SIGNIN_EMAILS_PER_NETWORK: '0',
  // Counted across the cluster: four anonymous sites per network per hour, wherever they are made.
  PLINTH_ANON_SITES_PER_HOUR: '4',
};

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, env: PUBLIC });
}, 120_000);

afterAll(async () => {
  for (const node of NODES)
    (await import('node:fs')).writeFileSync(
      `/tmp/node-${node}.out`,
      `exit=${cluster?.process(node)?.child.exitCode} sig=${cluster?.process(node)?.child.signalCode}\n${cluster?.process(node)?.output()}`,
    );
  await cluster?.stop();
});

const NODES = [0, 1, 2] as const;
const api = (node: number, call: ApiCall): Promise<ApiResponse> => callApi(cluster.port(node), call);
const visit = (node: number, name: string, path = '/') => request({ port: cluster.port(node), host: `${name}.sites.localhost:8080`, path });
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));

/** The built `plinth` command with these settings. */
function plinth(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Polls until `ready` holds on every node, or fails after `ms`. */
async function onEveryNode(ms: number, ready: (node: number) => Promise<boolean>): Promise<void> {
  for (const node of NODES) expect(await waitUntil(() => ready(node), ms, 20), `node ${node}`).toBe(true);
}

/** An account made by the operator, once every node knows its token. */
async function person(): Promise<TestAccount> {
  const owner = await accountWithToken(cluster.operator, 'builder');
  await onEveryNode(2000, async (node) => (await api(node, { path: '/v1/me', token: owner.token })).status === 200);
  return owner;
}

/** The app as a browser behind the load balancer sees it, talking to one node. */
function browserOn(node: number, from?: AppClient): AppClient {
  const server = { port: cluster.port(node), dataDir: cluster.dataDir(node), appUrl: PUBLIC.PLINTH_PUBLIC_APP_URL } as unknown as AppServer;
  const client = new AppClient(server);
  for (const [name, value] of from?.cookies ?? []) client.cookies.set(name, value);
  return client;
}

describe('three nodes on one PostgreSQL and one bucket', () => {
  it('a deploy acknowledged by one node is served at once by it, and by every node with the same bytes', async () => {
    const owner = await person();
    const photo = randomBytes(300 * 1024);
    const created = await cluster.deploy(0, { 'index.html': '<h1>from node 0</h1>', 'photo.bin': photo }, { token: owner.token });
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;
    // The node that answered 201 serves the new bytes on the next request, with no wait.
    expect(sha256((await visit(0, name, '/photo.bin')).body)).toBe(sha256(photo));
    await onEveryNode(2000, async (node) => (await visit(node, name)).status === 200);
    for (const node of NODES) {
      const served = await visit(node, name, '/photo.bin');
      expect(served.status).toBe(200);
      expect(sha256(served.body), `node ${node}`).toBe(sha256(photo));
      expect((await visit(node, name)).text).toContain('from node 0');
    }
    // The other nodes had never seen the blob: they fetched it from the bucket into their cache.
    const hash = sha256(photo);
    expect(existsSync(join(cluster.dataDir(2), 'blobs', hash.slice(0, 2), hash))).toBe(true);
  });

  it("serves a new deploy's small text files compressed from the first request on every node, the same bytes before and after their variants are recorded", async () => {
    const owner = await person();
    const css = `body { color: #333; }\n${'.plinth-rule { margin: 0 auto; padding: 1em; }\n'.repeat(60)}`;
    const created = await cluster.deploy(0, { 'index.html': '<h1>compressed</h1>', 'style.css': css }, { token: owner.token });
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;
    const revision = created.json.revision.id as string;
    const zipped = (node: number) =>
      request({ port: cluster.port(node), host: `${name}.sites.localhost:8080`, path: '/style.css', headers: { 'accept-encoding': 'gzip' } });
    // Node 0 makes the variants after its answer and uploads them after that: a node reached
    // first makes gzip from the blob (which it may have to fetch), as the compressor will.
    await onEveryNode(2000, async (node) => (await visit(node, name)).status === 200);
    const first = new Map<number, { etag: string; body: Buffer }>();
    for (const node of NODES) {
      const served = await zipped(node);
      expect(served.status, `node ${node}`).toBe(200);
      expect(served.headers['content-encoding'], `node ${node}`).toBe('gzip');
      expect(gunzipSync(served.body).toString(), `node ${node}`).toBe(css);
      first.set(node, { etag: served.headers.etag!, body: served.body });
    }
    const recorded = async (): Promise<boolean> => {
      await cluster.operator.cluster!.catchUp();
      return cluster.operator.getFile(revision, 'style.css')?.encodings?.gzip !== undefined;
    };
    expect(await waitUntil(recorded, 5000, 50)).toBe(true);
    for (const node of NODES) {
      const served = await zipped(node);
      expect(served.headers['content-encoding'], `node ${node}`).toBe('gzip');
      expect(served.headers.etag, `node ${node}`).toBe(first.get(0)!.etag);
      expect(served.body.equals(first.get(node)!.body), `node ${node}`).toBe(true);
      expect(served.body.equals(first.get(0)!.body), `node ${node}`).toBe(true);
    }
  });

  it('an update deployed on one node replaces the bytes served by every node', async () => {
    const owner = await person();
    const created = await cluster.deploy(1, { 'index.html': '<h1>first</h1>' }, { token: owner.token });
    const name = created.json.site.name as string;
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes('first'));
    const updated = await cluster.deploy(
      2,
      { 'index.html': '<h1>second</h1>' },
      { token: owner.token, fields: { site: name, base_revision: created.json.revision.id } },
    );
    expect(updated.status, updated.text).toBe(201);
    expect((await visit(2, name)).text).toContain('second');
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes('second'));
  });

  it('a request that reaches another node right after a 201 finds what was acknowledged, as behind a load balancer without sticky sessions', async () => {
    // Found by the three-node chaos run: a node decided on its replica as it stood, and the change
    // log had not reached it yet, so a new token was refused (401), a new site unknown (404), a
    // revision just published a stale base (409). Each step here goes to the next node at once.
    for (let round = 0; round < 6; round++) {
      const [a, b, c] = [round % 3, (round + 1) % 3, (round + 2) % 3];
      const owner = await accountWithToken(cluster.operator, 'builder');
      expect((await api(a, { path: '/v1/me', token: owner.token })).status, `token on node ${a}`).toBe(200);
      const created = await cluster.deploy(a, { 'index.html': `<h1>${round} a</h1>` }, { token: owner.token });
      expect(created.status, created.text).toBe(201);
      const name = created.json.site.name as string;
      const updated = await api(b, {
        method: 'POST',
        path: `/v1/deploy?site=${name}`,
        token: owner.token,
        raw: tgzBytes([['index.html', Buffer.from(`<h1>${round} b</h1>`)]]),
        headers: { 'x-base-revision': created.json.revision.id },
      });
      expect(updated.status, `archive update on node ${b}: ${updated.text}`).toBe(201);
      const rolledBack = await api(c, { method: 'POST', path: `/v1/sites/${name}/rollback`, token: owner.token, body: { revision: created.json.revision.id } });
      expect(rolledBack.status, `rollback on node ${c}: ${rolledBack.text}`).toBe(201);
      // A digest deploy is two requests, which a load balancer may send to two nodes.
      const html = `<h1>${round} digest</h1>`;
      const manifest = await api(a, {
        method: 'POST',
        path: '/v1/deploy/manifest',
        token: owner.token,
        body: {
          site: name,
          base_revision: rolledBack.json.revision.id,
          files: [{ path: 'index.html', size: Buffer.byteLength(html), sha256: sha256(Buffer.from(html)) }],
        },
      });
      expect(manifest.status, manifest.text).toBe(201);
      const uploaded = await api(b, {
        method: 'POST',
        path: `/v1/deploy?manifest=${manifest.json.manifest}`,
        token: owner.token,
        body: { files: [{ path: 'index.html', content: html }] },
      });
      expect(uploaded.status, `upload of the manifest on node ${b}: ${uploaded.text}`).toBe(201);
      const listed = await api(c, { path: `/v1/sites/${name}`, token: owner.token });
      expect(listed.json.live_revision.id, `live revision on node ${c}`).toBe(uploaded.json.revision.id);
    }
  });

  it('of three nodes deploying on the same base revision, one answers 201 and the others 409', async () => {
    const owner = await person();
    const created = await cluster.deploy(0, { 'index.html': '<h1>base</h1>' }, { token: owner.token });
    const name = created.json.site.name as string;
    const base = created.json.revision.id as string;
    await onEveryNode(2000, async (node) => (await api(node, { path: `/v1/sites/${name}`, token: owner.token })).json?.live_revision?.id === base);
    const update = (node: number) =>
      cluster.deploy(node, { 'index.html': `<h1>from ${node}</h1>` }, { token: owner.token, fields: { site: name, base_revision: base } });
    const answers = await Promise.all(NODES.map(update));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
    const winner = NODES.find((node) => answers[node]!.status === 201)!;
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes(`from ${winner}`));
  });

  it('a name is taken once, cluster-wide', async () => {
    const owner = await person();
    const sites = await Promise.all(
      NODES.map(async (node) => (await cluster.deploy(node, { 'index.html': '<h1>x</h1>' }, { token: owner.token })).json.site.name as string),
    );
    await onEveryNode(2000, async (node) => (await api(node, { path: `/v1/sites/${sites[2]}`, token: owner.token })).status === 200);
    const wanted = `taken-once-${Date.now()}`;
    const answers = await Promise.all(
      NODES.map((node) => api(node, { method: 'POST', path: `/v1/sites/${sites[node]}/rename`, token: owner.token, body: { name: wanted } })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status !== 200).every((answer) => answer.status >= 400 && answer.status < 500)).toBe(true);
  });

  it('counts a rate cap across nodes', async () => {
    // Anonymous deploys from one network, spread over the nodes: the cap of 4 holds in total.
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push((await cluster.deploy(i % 3, { 'index.html': `<h1>anon ${i}</h1>` })).status);
    expect(answers.filter((status) => status === 201)).toHaveLength(4);
    expect(answers.slice(4)).toEqual([429, 429]);
  });

  it('a revoked token is refused on every node within a second', async () => {
    const owner = await person();
    const row = cluster.operator.listApiTokens(owner.account.id)[0]!;
    const revokedAt = Date.now();
    await cluster.operator.revokeApiToken(owner.account.id, row.id);
    expect(cluster.operator.findToken(hashToken(owner.token))).toBeUndefined();
    await onEveryNode(1000, async (node) => (await api(node, { path: '/v1/me', token: owner.token })).status === 401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  });

  it('signs in across nodes once, and an ended session is refused on every node within a second', async () => {
    const email = `cluster-${Date.now()}@example.com`;
    const onA = browserOn(0);
    const { token } = await onA.startSignIn(email);
    // The e-mailed link, opened on another node, works once; a third node refuses it again.
    const onB = browserOn(1, onA);
    const done = await onB.post('/login/verify', { token, csrf: await onB.formToken(`/login/verify?token=${token}`) });
    expect(done.status).toBe(303);
    const session = onB.session()!;
    expect(session).toBeTruthy();
    // Replayed on the node that sent the e-mail, it is refused: the use was committed cluster-wide.
    const replay = browserOn(0);
    const again = await replay.post('/login/verify', { token, csrf: await replay.formToken('/login') });
    expect(again.status).toBe(400);
    expect(replay.session()).toBeUndefined();

    await onEveryNode(2000, async (node) => (await browserOn(node, onB).get('/')).status === 200);
    const signOut = browserOn(2, onB);
    expect((await signOut.post('/logout', { csrf: await signOut.formToken('/') })).status).toBe(303);
    const endedAt = Date.now();
    await onEveryNode(1000, async (node) => {
      const stale = browserOn(node);
      stale.cookies.set('plinth_session', session);
      return (await stale.get('/')).headers.location === '/login';
    });
    expect(Date.now() - endedAt).toBeLessThan(1000);
  });

  it('plinth admin works against the cluster from a machine of its own, and every node applies what it does', async () => {
    // An operator's machine: the cluster's settings and an empty folder for the command's replica.
    const admin = (...args: string[]) => plinth({ ...cluster.env(0), PLINTH_DATA_DIR: tempDir('plinth-operator-machine-') }, 'admin', ...args);
    const email = `ops-${Date.now()}@example.com`;
    const made = await admin('account', 'create', '--email', email, '--plan', 'team');
    expect(made.code, made.stderr).toBe(0);
    expect((await admin('account', 'set-plan', '--email', email, '--plan', 'company')).code).toBe(0);
    const token = (await admin('token', 'create', '--email', email)).stdout.trim();
    await onEveryNode(2000, async (node) => (await api(node, { path: '/v1/me', token })).json?.plan === 'company');
    const created = await cluster.deploy(1, { 'index.html': '<h1>operated</h1>' }, { token });
    const name = created.json.site.name as string;
    const helper = `helper-${Date.now()}@example.com`;
    expect((await admin('account', 'create', '--email', helper)).code).toBe(0);
    const added = await admin('member', 'add', '--site', name, '--email', helper, '--role', 'editor');
    expect(added.code, added.stderr).toBe(0);
    expect((await admin('site', 'takedown', name)).code).toBe(0);
    await onEveryNode(1000, async (node) => (await visit(node, name)).status === 451);
    expect((await admin('site', 'restore', name)).code).toBe(0);
    await onEveryNode(1000, async (node) => (await visit(node, name)).status === 200);
    const reports = await admin('report', 'list', '--status', 'all');
    expect(reports.code, reports.stderr).toBe(0);
  });

  it('plinth admin refuses, changing nothing, a data directory that holds an embedded install', async () => {
    const embedded = tempDir('plinth-embedded-');
    expect((await plinth({ PLINTH_DATA_DIR: embedded }, 'admin', 'account', 'create', '--email', `alone-${Date.now()}@example.com`)).code).toBe(0);
    const refused = await plinth({ ...cluster.env(0), PLINTH_DATA_DIR: embedded }, 'admin', 'report', 'list');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/migrate --to-cluster/);
    expect((await plinth({ PLINTH_DATA_DIR: embedded }, 'admin', 'report', 'list')).code).toBe(0);
  });

  it('a node killed in the middle of a deploy loses nothing acknowledged, and catches up when it starts again', async () => {
    const owner = await person();
    const big = randomBytes(4 * 1024 * 1024);
    const deploying = cluster.deploy(1, { 'index.html': '<h1>big</h1>', 'big.bin': big }, { token: owner.token }).catch(() => undefined);
    // Killed once the upload is arriving (its spool file exists), or after a second at most.
    const spool = join(cluster.dataDir(1), 'tmp', 'uploads');
    await waitUntil(async () => existsSync(spool) && readdirSync(spool).length > 0, 1000, 2);
    await cluster.kill(1);
    const cut = await deploying;
    // Meanwhile the others go on.
    const created = await cluster.deploy(0, { 'index.html': '<h1>meanwhile</h1>' }, { token: owner.token });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    await cluster.start(1);
    expect((await visit(1, name)).text).toContain('meanwhile');
    // The cut-off deploy is all or nothing: acknowledged, every node serves it whole. Not
    // acknowledged, no node knows it, unless the kill came between its commit and its answer:
    // then it is whole on every node too, never half there.
    const mine = await api(0, { path: '/v1/sites', token: owner.token });
    const cutOff = (mine.json.sites as Array<{ name: string }>).map((site) => site.name).filter((site) => site !== name);
    if (cut?.status === 201) expect(cutOff).toEqual([cut.json.site.name]);
    else expect(cutOff.length).toBeLessThanOrEqual(1);
    for (const site of cutOff) await onEveryNode(2000, async (node) => sha256((await visit(node, site, '/big.bin')).body) === sha256(big));
  });

  it("a small site's files are written after the answer: every file is served at once all the same, and after a kill before they were written", async () => {
    const owner = await person();
    const files: Record<string, string | Buffer> = { 'index.html': `<h1>${randomBytes(8).toString('hex')}</h1>` };
    for (let i = 0; i < 12; i++) files[`page-${i}.html`] = `<p>page ${i} ${randomBytes(8).toString('hex')}</p>`.repeat(20);
    // Over the pack bound (1 MiB): its file is written before the answer, as it goes up from it.
    files['large.bin'] = randomBytes(1024 * 1024 + 1);
    // Its deploys' timing is logged at the info level.
    await cluster.kill(1, 'SIGTERM');
    await cluster.start(1, { PLINTH_LOG_LEVEL: 'info' });
    const logged = cluster.process(1)!.output().length;
    const created = await cluster.deploy(1, files, { token: owner.token });
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;
    // The node said so (its log is written a little later): every small blob's file waited for the answer.
    const timing = (): string | undefined =>
      cluster
        .process(1)!
        .output()
        .slice(logged)
        .split('\n')
        .find((line) => line.includes('deploy.timing'));
    await waitUntil(async () => timing() !== undefined, 2000);
    expect(timing()).toContain(`"filesAfterAnswer":${Object.keys(files).length - 1}`);
    const check = async (node: number): Promise<void> => {
      for (const [path, content] of Object.entries(files)) {
        const served = await visit(node, name, `/${path}`);
        expect(served.status, `node ${node} ${path}`).toBe(200);
        expect(sha256(served.body), `node ${node} ${path}`).toBe(sha256(Buffer.from(content)));
      }
    };
    // The node that answered serves every file on the next requests, with no wait.
    await check(1);
    await onEveryNode(2000, async (node) => (await visit(node, name)).status === 200);
    for (const node of NODES) await check(node);
    // Killed before its files were written (as if: they are removed), the node serves them from the bucket.
    await cluster.kill(1);
    const blobs = createBlobStore({ dir: join(cluster.dataDir(1), 'blobs'), now: Date.now });
    for (const [path, content] of Object.entries(files)) if (path !== 'large.bin') rmSync(blobs.pathOf(sha256(Buffer.from(content))), { force: true });
    await cluster.start(1);
    await check(1);
  });

  it('a node answers deploys before syncing its blob cache, and never serves a cached file the machine lost in a fall', async () => {
    const owner = await person();
    const page = `<h1>${randomBytes(8).toString('hex')}</h1>`;
    const created = await cluster.deploy(2, { 'index.html': page }, { token: owner.token });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    expect((await visit(2, name)).text).toBe(page);
    const blobs = join(cluster.dataDir(2), 'blobs');
    const state = () => JSON.parse(readFileSync(join(blobs, CACHE_STATE_FILE), 'utf8')) as { bootId: string; clean: boolean };
    // Open while the node runs; clean once an orderly stop synced it.
    expect(state()).toEqual({ bootId: currentBootId(), clean: false });
    await cluster.kill(2, 'SIGTERM');
    expect(state()).toEqual({ bootId: currentBootId(), clean: true });
    // As the machine may leave it after a power loss with the node running: another boot's state,
    // not clean, and the page's cached file short.
    writeFileSync(join(blobs, CACHE_STATE_FILE), JSON.stringify({ bootId: 'a-boot-before-the-fall', clean: false }));
    const cached = createBlobStore({ dir: blobs, now: Date.now }).pathOf(sha256(Buffer.from(page)));
    truncateSync(cached, 4);
    await cluster.start(2);
    expect(cluster.process(2)!.output()).toContain('blobs.cache_dropped_after_power_loss');
    // Served whole, from the bucket again.
    expect((await visit(2, name)).text).toBe(page);
    expect(readFileSync(cached, 'utf8')).toBe(page);
  });

  it('while PostgreSQL is away, deploys answer 503 with Retry-After and serving goes on; every acknowledged deploy survives', async () => {
    const owner = await person();
    const created = await cluster.deploy(2, { 'index.html': '<h1>v0</h1>' }, { token: owner.token });
    const name = created.json.site.name as string;
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes('v0'));

    // A stream of updates from every node while PostgreSQL goes away for a moment and comes back.
    let stop = false;
    const acknowledged: Array<{ revision: string; html: string }> = [];
    const refusals: ApiResponse[] = [];
    const writer = async (node: number) => {
      for (let i = 0; !stop; i++) {
        const live = await api(node, { path: `/v1/sites/${name}`, token: owner.token });
        const html = `<h1>v-${node}-${i}</h1>`;
        const answer = await cluster.deploy(
          node,
          { 'index.html': html },
          { token: owner.token, fields: { site: name, base_revision: live.json.live_revision.id } },
        );
        if (answer.status === 201) acknowledged.push({ revision: answer.json.revision.id, html });
        else if (answer.status !== 409) refusals.push(answer);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const writers = NODES.map(writer);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await cluster.pg.pause();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const node of NODES) expect((await visit(node, name)).status, `node ${node} serves`).toBe(200);
      expect((await api(0, { path: `/v1/sites/${name}`, token: owner.token })).status).toBe(200);
    } finally {
      await cluster.pg.resume();
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop = true;
    await Promise.all(writers);

    expect(refusals.length).toBeGreaterThan(0);
    for (const refused of refusals) {
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.json.error).toMatchObject({ code: 'unavailable', details: { reason: 'records_unavailable' } });
    }
    expect(acknowledged.length).toBeGreaterThan(2);
    // Nothing acknowledged was lost: every revision is in the history (page after page: a fast
    // cluster acknowledges about a hundred here), and the last one is live everywhere. Node 0 reads
    // its replica, which learns of the other nodes' last deploys a moment after their 201.
    const history = async (): Promise<Set<string>> => {
      const ids = new Set<string>();
      for (let cursor: string | null = ''; cursor !== null;) {
        const page = await api(0, { path: `/v1/sites/${name}/revisions?limit=100${cursor ? `&cursor=${cursor}` : ''}`, token: owner.token });
        for (const revision of page.json.revisions as Array<{ id: string }>) ids.add(revision.id);
        cursor = page.json.next_cursor as string | null;
      }
      return ids;
    };
    let known = new Set<string>();
    await waitUntil(async () => {
      known = await history();
      return acknowledged.every(({ revision }) => known.has(revision));
    }, 5000);
    for (const { revision } of acknowledged) expect(known.has(revision), revision).toBe(true);
    const last = acknowledged[acknowledged.length - 1]!;
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes(last.html));
  });

  it('while PostgreSQL is away, a node serves a packed file it has not cached: where it is packed travels with the file records', async () => {
    const owner = await person();
    const css = 'body { color: #222; margin: 0 auto; }\n'.repeat(200);
    const notes = randomBytes(3000).toString('hex');
    const created = await cluster.deploy(0, { 'index.html': '<h1>packed</h1>', 'style.css': css, 'notes.txt': notes }, { token: owner.token });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    const revision = created.json.revision.id as string;
    // Packing is on by default: the replicated records say which pack holds each file.
    await cluster.operator.cluster!.catchUp();
    const packs = ['index.html', 'style.css', 'notes.txt'].map((path) => cluster.operator.getFile(revision, path)!.pack?.key);
    expect(packs[0]).toMatch(/^packs\/[0-9a-f-]{36}$/);
    expect(new Set(packs)).toEqual(new Set([packs[0]]));
    // Every node has the revision (each caches only the page it served); the variants are up.
    await onEveryNode(2000, async (node) => (await visit(node, name)).text.includes('packed'));
    await new Promise((resolve) => setTimeout(resolve, 500));

    await cluster.pg.pause();
    try {
      for (const node of [1, 2]) {
        const plain = await visit(node, name, '/notes.txt');
        expect(plain.status, `node ${node}`).toBe(200);
        expect(plain.text).toBe(notes);
        // Its gzip variant went up packed after the answer, its place in PostgreSQL only: the node makes it from the blob.
        const zipped = await request({
          port: cluster.port(node),
          host: `${name}.sites.localhost:8080`,
          path: '/style.css',
          headers: { 'accept-encoding': 'gzip' },
        });
        expect(zipped.status, `node ${node}`).toBe(200);
        expect(zipped.headers['content-encoding']).toBe('gzip');
        expect(gunzipSync(zipped.body).toString('utf8')).toBe(css);
      }
    } finally {
      await cluster.pg.resume();
    }
  });

  it('while the bucket is away, deploys answer 503, cached files are served, uncached ones answer 503; then all works again', async () => {
    const owner = await person();
    const photo = randomBytes(100 * 1024);
    const created = await cluster.deploy(0, { 'index.html': '<h1>photo</h1>', 'photo.bin': photo }, { token: owner.token });
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;
    await onEveryNode(2000, async (node) => (await api(node, { path: `/v1/sites/${name}`, token: owner.token })).status === 200);
    await cluster.s3.pause();
    try {
      const refused = await cluster.deploy(1, { 'index.html': `<h1>${randomBytes(8).toString('hex')}</h1>` }, { token: owner.token });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json.error).toMatchObject({ code: 'unavailable', details: { reason: 'storage_unreachable' } });
      // Node 0 wrote the blob, so it has it; node 2 never had it and will not serve a wrong body.
      const cached = await visit(0, name, '/photo.bin');
      expect(cached.status).toBe(200);
      expect(sha256(cached.body)).toBe(sha256(photo));
      const uncached = await visit(2, name, '/photo.bin');
      expect(uncached.status).toBe(503);
      expect(uncached.headers['retry-after']).toBeDefined();
    } finally {
      await cluster.s3.resume();
    }
    expect(sha256((await visit(2, name, '/photo.bin')).body)).toBe(sha256(photo));
    expect(await waitUntil(async () => (await cluster.deploy(1, { 'index.html': '<h1>after</h1>' }, { token: owner.token })).status === 201, 10_000, 100)).toBe(
      true,
    );
  });
});
