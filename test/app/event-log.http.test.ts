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

  /** An anonymous site with a webhook its site token registered, posting to `path` of the receiver. */
  async function anonymousSiteWithHook(path: string): Promise<{ name: string; claimPath: string; hookId: string }> {
    const deployed = await callApi(server.port, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>anon</h1>' }] } });
    expect(deployed.status).toBe(201);
    const name = deployed.json.site.name as string;
    const hook = await callApi(server.port, {
      method: 'POST',
      path: `/v1/sites/${name}/webhooks`,
      token: deployed.json.site_token,
      body: { url: hookUrl.replace('/hook?<b>', path), events: ['site.claimed', 'deploy.published', 'site.deleted'] },
    });
    expect(hook.status).toBe(201);
    return { name, claimPath: `/claim/${(deployed.json.claim_url as string).split('/claim/')[1]!}`, hookId: hook.json.id as string };
  }
  const bodiesAt = (path: string) => received.filter((request) => request.path === path).map((request) => JSON.parse(request.body));
  async function apiTokenOf(email: string): Promise<string> {
    const account = server.store.getAccountByEmail(email)!;
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await server.store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name: 'test' });
    return token;
  }

  it("tells a site token's webhook of the claim made in the app, and nothing after: the new owner's changes and e-mail stay theirs", async () => {
    const { name, claimPath, hookId } = await anonymousSiteWithHook('/lifecycle');
    const client = new AppClient(server);
    const email = 'claimer@example.com';
    await client.signIn(email);
    const claimed = await client.post(claimPath, { csrf: await client.formToken(claimPath) });
    expect(claimed.status).toBe(303);
    expect(await waitUntil(() => bodiesAt('/lifecycle').length === 1, 10_000)).toBe(true);
    expect(bodiesAt('/lifecycle')[0]).toMatchObject({ type: 'site.claimed', data: { site: { name }, actor: email } });

    // The new owner finds the site token's webhook disabled, and says why.
    const token = await apiTokenOf(email);
    const hooks = await callApi(server.port, { path: `/v1/sites/${name}/webhooks`, token });
    expect(hooks.json.webhooks).toEqual([expect.objectContaining({ id: hookId, state: 'disabled', disabled_for: 'claim' })]);
    const page = await client.get(`/sites/${name}`);
    expect(page.text).toContain('when the site was claimed');

    // The owner's own webhook hears the owner's deploy and the deletion; the site token's does not.
    const own = await callApi(server.port, {
      method: 'POST',
      path: `/v1/sites/${name}/webhooks`,
      token,
      body: { url: hookUrl.replace('/hook?<b>', '/owners'), events: ['deploy.published', 'site.deleted'] },
    });
    expect(own.status).toBe(201);
    const live = await callApi(server.port, { path: `/v1/sites/${name}`, token });
    const update = await callApi(server.port, {
      method: 'POST',
      path: '/v1/deploy',
      token,
      body: { site: name, base_revision: live.json.live_revision.id, files: [{ path: 'index.html', content: '<h1>mine</h1>' }] },
    });
    expect(update.status).toBe(201);
    const requested = await callApi(server.port, { method: 'DELETE', path: `/v1/sites/${name}`, token });
    expect(requested.status).toBe(202);
    const approvePath = `/approve/${requested.json.approval.token as string}`;
    const approved = await client.post(approvePath, { address: `${name}.sites.localhost`, csrf: await client.formToken(approvePath) });
    expect(approved.status).toBe(303);
    expect(await waitUntil(() => bodiesAt('/owners').length === 2, 10_000)).toBe(true);
    expect(
      bodiesAt('/owners')
        .map((body) => body.type)
        .sort(),
    ).toEqual(['deploy.published', 'site.deleted']);
    expect(bodiesAt('/lifecycle').map((body) => body.type)).toEqual(['site.claimed']);
    const log = server.store.listEvents(`site:${server.store.getSite(name)!.id}`, { limit: 20 }).events;
    expect(log.find((event) => event.kind === 'webhook.disabled')?.details).toMatchObject({ webhook: hookId, reason: 'claim' });
  });

  it("keeps the site token's webhook when the claimer gives the agent an account token", async () => {
    const { name, claimPath, hookId } = await anonymousSiteWithHook('/kept');
    const client = new AppClient(server);
    const email = 'trusting@example.com';
    await client.signIn(email);
    const claimed = await client.post(claimPath, { agent_token: 'yes', csrf: await client.formToken(claimPath) });
    expect(claimed.status).toBe(303);
    expect(await waitUntil(() => bodiesAt('/kept').length === 1, 10_000)).toBe(true);
    const token = await apiTokenOf(email);
    const hooks = await callApi(server.port, { path: `/v1/sites/${name}/webhooks`, token });
    expect(hooks.json.webhooks).toEqual([expect.objectContaining({ id: hookId, state: 'active' })]);
  });
});
