import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { callApi } from '../helpers/http.js';
import { useAppServer } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';
import { AppClient } from './http-client.js';

/** The app shows a site's audit log and its webhooks' deliveries, and each account's own log. */

const server = useAppServer({ PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1' });
let receiver: Server;
let hookUrl: string;
/** The bodies the receiver got, by path. */
const received: Array<{ path: string; body: string }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?<b>`;
});
afterAll(() => new Promise((resolve) => receiver?.close(resolve)));

describe('the audit log in the app', () => {
  it("shows the site's changes and its webhooks' deliveries to its owner, and the account's sign-ins", async () => {
    const client = new AppClient(server);
    const email = 'audited@example.com';
    await client.signIn(email);
    const account = server.store.getAccountByEmail(email)!;
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await server.store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name: 'test' });
    const created = await callApi(server.port, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>a</h1>' }] } });
    const name = created.json.site.name as string;
    const hook = await callApi(server.port, {
      method: 'POST',
      path: `/v1/sites/${name}/webhooks`,
      token,
      body: { url: hookUrl, events: ['deploy.published'] },
    });
    expect(hook.status).toBe(201);
    const second = await callApi(server.port, {
      method: 'POST',
      path: '/v1/deploy',
      token,
      body: { site: name, base_revision: created.json.revision.id, files: [{ path: 'index.html', content: '<h1>b</h1>' }] },
    });
    expect(second.status).toBe(201);
    expect(
      await waitUntil(
        async () =>
          (await callApi(server.port, { path: `/v1/sites/${name}/webhooks/${hook.json.id}/deliveries`, token })).json.deliveries[0]?.state === 'delivered',
        10_000,
      ),
    ).toBe(true);

    const page = await client.get(`/sites/${name}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2>Activity</h2>');
    expect(page.text).toContain('<code>webhook.created</code>');
    expect(page.text).toContain('<code>deploy.published</code>');
    expect(page.text).toContain(email);
    expect(page.text).toContain('<h2>Webhooks</h2>');
    // The URL is the owner's text: escaped wherever it is shown.
    expect(page.text).toContain('/hook?&lt;b&gt;');
    expect(page.text).not.toContain('/hook?<b>');
    expect(page.text).toMatch(/<td data-label="State">delivered/);
    expect(page.text).not.toContain(hook.json.secret);

    const tokens = await client.get('/tokens');
    expect(tokens.text).toContain('<h2>Account activity</h2>');
    expect(tokens.text).toContain('<code>account.signed_in</code>');
  });

  it("tells a site token's webhook of the claim made in the app, then of the deletion its new owner approves there", async () => {
    const deployed = await callApi(server.port, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>anon</h1>' }] } });
    expect(deployed.status).toBe(201);
    const name = deployed.json.site.name as string;
    const url = hookUrl.replace('/hook?<b>', '/lifecycle');
    const hook = await callApi(server.port, {
      method: 'POST',
      path: `/v1/sites/${name}/webhooks`,
      token: deployed.json.site_token,
      body: { url, events: ['site.claimed', 'site.deleted'] },
    });
    expect(hook.status).toBe(201);
    const types = () => received.filter((request) => request.path === '/lifecycle').map((request) => JSON.parse(request.body));

    const client = new AppClient(server);
    const email = 'claimer@example.com';
    await client.signIn(email);
    const claimPath = `/claim/${(deployed.json.claim_url as string).split('/claim/')[1]!}`;
    const claimed = await client.post(claimPath, { csrf: await client.formToken(claimPath) });
    expect(claimed.status).toBe(303);
    expect(await waitUntil(() => types().length === 1, 10_000)).toBe(true);
    expect(types()[0]).toMatchObject({ type: 'site.claimed', data: { site: { name }, actor: email } });

    const account = server.store.getAccountByEmail(email)!;
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await server.store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name: 'test' });
    const requested = await callApi(server.port, { method: 'DELETE', path: `/v1/sites/${name}`, token });
    expect(requested.status).toBe(202);
    const approvePath = `/approve/${requested.json.approval.token as string}`;
    const approved = await client.post(approvePath, { address: `${name}.sites.localhost`, csrf: await client.formToken(approvePath) });
    expect(approved.status).toBe(303);
    expect(await waitUntil(() => types().length === 2, 10_000)).toBe(true);
    expect(types()[1]).toMatchObject({ type: 'site.deleted', data: { site: { name }, actor: email } });
    const log = server.store.listEvents(`site:${server.store.getSite(name)!.id}`, { limit: 10 }).events.map((event) => event.kind);
    expect(log).toEqual(['site.deleted', 'site.deletion_requested', 'site.claimed', 'webhook.created', 'deploy.published']);
  });
});
