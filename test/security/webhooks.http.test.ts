import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookTransport } from '../../src/outbound/index.js';
import { deliveryView, WEBHOOK_TARGET_REFUSED } from '../../src/sites/index.js';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useTestServer } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Webhooks (docs/webhooks.md): signed deliveries to a loopback receiver that fails and recovers,
 * verified with the Standard Webhooks algorithm; targets that lead inside are refused in every
 * spelling; redirects are not followed; a receiver that keeps failing gets its webhook disabled.
 */

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 that answers each request as `answer` says (status, or a redirect). */
async function startReceiver(answer: (request: Received, index: number) => number | { redirect: string } | 'hang') {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      const decided = answer(request, received.length - 1);
      if (decided === 'hang') return void hanging.push(res);
      if (typeof decided === 'object') {
        res.writeHead(302, { location: decided.redirect }).end();
        return;
      }
      res.writeHead(decided, { 'content-type': 'text/plain' }).end('x'.repeat(200_000));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The Standard Webhooks verification, written from the specification: the signature is
 * base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)) where the key is the base64 after
 * `whsec_`; the header holds space-separated `v1,<signature>` entries; the timestamp must be
 * within five minutes.
 */
function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The deliverer looks for due deliveries ten times a second rather than once: a test waits for each one less. */
const POLL_MS = '100';

const addWebhook = (server: { port: number }, name: string, token: string, body: unknown) =>
  api(server as never, { method: 'POST', path: `/v1/sites/${name}/webhooks`, token, body });

async function publish(port: number, token: string, name: string, content: string): Promise<void> {
  const base = (await api({ port } as never, { path: `/v1/sites/${name}`, token })).json.live_revision.id;
  const answer = await deployTo(port, {
    token,
    contentType: 'application/json',
    body: jsonDeployBody([['index.html', content]], { site: name, base_revision: base }),
  });
  expect(answer.status).toBe(201);
}

describe('delivering to a receiver that fails, then recovers', () => {
  // The server's clock runs ahead by `skew`: the retry test moves it on to the retry's time
  // rather than waiting the 5 s out.
  let skew = 0;
  const server = useTestServer({ PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1', PLINTH_WEBHOOK_POLL_MS: POLL_MS }, { now: () => Date.now() + skew });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: TestAccount;

  beforeAll(async () => {
    // The first attempt of each delivery fails with a 503; the retry goes through.
    const seen = new Set<string>();
    receiver = await startReceiver((request) => {
      const id = String(request.headers['webhook-id']);
      if (seen.has(id)) return 204;
      seen.add(id);
      return 503;
    });
    owner = await accountWithToken(server.store, 'builder');
  });
  afterAll(() => receiver?.close());

  it('registers a webhook and shows its secret once', async () => {
    const site = await accountSite(server.store, owner);
    const created = await addWebhook(server, site.name, owner.token, { url: receiver.url(), events: ['deploy.published', 'site.rolled_back'] });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      url: receiver.url(),
      events: ['deploy.published', 'site.rolled_back'],
      state: 'active',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const listed = await api(server, { path: `/v1/sites/${site.name}/webhooks`, token: owner.token });
    expect(listed.json.webhooks).toHaveLength(1);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.secret);
    const log = await api(server, { path: `/v1/sites/${site.name}/events`, token: owner.token });
    expect(log.json.events[0]).toMatchObject({ kind: 'webhook.created', details: { webhook: created.json.id } });
    expect(JSON.stringify(log.json)).not.toContain(created.json.secret);
  });

  it('retries a failed delivery with the same webhook-id, signed as Standard Webhooks says', async () => {
    const site = await accountSite(server.store, owner);
    const created = await addWebhook(server, site.name, owner.token, { url: receiver.url(), events: ['deploy.published'] });
    const secret: string = created.json.secret;
    const before = receiver.received.length;
    await publish(server.port, owner.token, site.name, '<h1>two</h1>');
    const deliveries = async () => (await api(server, { path: `/v1/sites/${site.name}/webhooks/${created.json.id}/deliveries`, token: owner.token })).json;

    // The first attempt fails; the second is due about 5 s later, and not sent before.
    let pending: Record<string, unknown> | undefined;
    expect(
      await waitUntil(async () => {
        pending = (await deliveries()).deliveries[0];
        return pending?.state === 'pending' && pending.attempts === 1 && pending.last_status === 503;
      }, 20_000),
    ).toBe(true);
    expect(receiver.received.length).toBe(before + 1);
    const failedAt = Number(receiver.received[before]!.headers['webhook-timestamp']) * 1000;
    expect(Date.parse(String(pending!.next_attempt_at)) - failedAt).toBeGreaterThanOrEqual(4000);
    // Once the server's clock has passed that time, the second goes through.
    skew += 5_000;
    expect(await waitUntil(() => receiver.received.length >= before + 2, 20_000)).toBe(true);
    const [first, second] = receiver.received.slice(before);
    expect(first!.headers['webhook-id']).toMatch(/^msg_/);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    expect(Number(second!.headers['webhook-timestamp']) - Number(first!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(4);
    for (const attempt of [first!, second!]) {
      expect(attempt.headers['content-type']).toBe('application/json');
      expect(verifyStandardWebhook(secret, attempt.headers, attempt.body)).toBe(true);
      // A changed body, or another webhook's secret, does not verify.
      const tampered = attempt.body.replace('"number":2', '"number":3');
      expect(tampered).not.toBe(attempt.body);
      expect(verifyStandardWebhook(secret, attempt.headers, tampered)).toBe(false);
      expect(verifyStandardWebhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`, attempt.headers, attempt.body)).toBe(false);
    }
    const payload = JSON.parse(second!.body);
    expect(payload).toMatchObject({
      type: 'deploy.published',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { site: { name: site.name }, actor: owner.account.email, number: 2 },
    });

    expect(await waitUntil(async () => (await deliveries()).deliveries[0]?.state === 'delivered', 5_000)).toBe(true);
    expect((await deliveries()).deliveries).toEqual([
      expect.objectContaining({ id: first!.headers['webhook-id'], event: 'deploy.published', state: 'delivered', attempts: 2, last_status: 204 }),
    ]);
  });

  it('is managed by owners only, and is gone once removed', async () => {
    const editor = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [[editor, 'editor']]);
    expect((await addWebhook(server, site.name, editor.token, { url: receiver.url(), events: ['deploy.published'] })).status).toBe(403);
    expect((await api(server, { path: `/v1/sites/${site.name}/webhooks`, token: editor.token })).status).toBe(403);
    const created = await addWebhook(server, site.name, owner.token, { url: receiver.url(), events: ['deploy.published'] });
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/webhooks/${created.json.id}`, token: editor.token })).status).toBe(403);
    const removed = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/webhooks/${created.json.id}`, token: owner.token });
    expect(removed.json).toEqual({ id: created.json.id, deleted: true });
    expect((await api(server, { path: `/v1/sites/${site.name}/webhooks`, token: owner.token })).json.webhooks).toEqual([]);
    const before = receiver.received.length;
    await publish(server.port, owner.token, site.name, '<h1>after removal</h1>');
    // A publish queues its deliveries before it answers, and only what is queued is ever sent.
    expect(await server.store.deliveries.list(created.json.id, 10)).toEqual([]);
    expect(receiver.received.length).toBe(before);
  });

  it("keeps a webhook URL's path and query (a receiver's secret) out of the log members read", async () => {
    // Slack, Discord and the like put the credential in the URL: whoever has it may post there.
    // The list of webhooks is the owners'; the site's log is every member's, viewers included.
    const viewer = await accountWithToken(server.store, 'builder');
    const editor = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [
      [viewer, 'viewer'],
      [editor, 'editor'],
    ]);
    const secretUrl = receiver.url('/services/T0001/B0002/s3cretPathPart?token=s3cretQuery');
    const created = await addWebhook(server, site.name, owner.token, { url: secretUrl, events: ['site.deleted'] });
    expect(created.status).toBe(201);
    expect(created.json.url).toBe(secretUrl);
    const removed = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/webhooks/${created.json.id}`, token: owner.token });
    expect(removed.status).toBe(200);
    for (const reader of [viewer, editor, owner]) {
      const log = await api(server, { path: `/v1/sites/${site.name}/events`, token: reader.token });
      expect(log.status).toBe(200);
      expect(log.json.events.map((event: { kind: string }) => event.kind).slice(0, 2)).toEqual(['webhook.deleted', 'webhook.created']);
      for (const event of log.json.events.slice(0, 2)) expect(event.details).toMatchObject({ webhook: created.json.id, url: new URL(secretUrl).origin });
      expect(JSON.stringify(log.json)).not.toContain('s3cret');
    }
    // The account's own log, and the site's page in the app, show the same.
    const mine = await api(server, { path: '/v1/me/events', token: owner.token });
    expect(JSON.stringify(mine.json)).not.toContain('s3cret');
  });

  it('refuses an unknown event and a body without url', async () => {
    const site = await accountSite(server.store, owner);
    expect((await addWebhook(server, site.name, owner.token, { url: receiver.url(), events: ['site.hacked'] })).status).toBe(400);
    expect((await addWebhook(server, site.name, owner.token, { url: receiver.url(), events: [] })).status).toBe(400);
    expect((await addWebhook(server, site.name, owner.token, { events: ['deploy.published'] })).status).toBe(400);
  });
});

describe('targets that lead inside', () => {
  // Loopback is not allowed here, as in production.
  const server = useTestServer();
  let owner: TestAccount;
  let name: string;

  beforeAll(async () => {
    owner = await accountWithToken(server.store, 'builder');
    name = (await accountSite(server.store, owner)).name;
  });

  it.each([
    ['loopback over http', 'http://127.0.0.1:8080/hook'],
    ['loopback over https', 'https://127.0.0.1/hook'],
    ['loopback, short form', 'https://127.1/'],
    ['loopback, hex', 'https://0x7f.0.0.1/'],
    ['loopback, one number', 'https://2130706433/'],
    ['loopback, octal', 'https://0177.0.0.1/'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped loopback, hex', 'https://[::ffff:7f00:1]/'],
    ['NAT64 of loopback', 'https://[64:ff9b::7f00:1]/'],
    ['private 10/8', 'https://10.0.0.1/'],
    ['private 192.168/16', 'https://192.168.1.1/'],
    ['private 172.16/12', 'https://172.16.0.1/'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['carrier-grade NAT', 'https://100.64.0.1/'],
    ['unspecified', 'https://0.0.0.0/'],
    ['IPv6 link-local', 'https://[fe80::1]/'],
    ['IPv6 unique local', 'https://[fd00::1]/'],
    ['localhost by name', 'https://localhost/'],
    ['a public address over plain http', 'http://93.184.216.34/'],
    ['credentials in the URL', 'https://user:secret@93.184.216.34/'],
    ['not http', 'ftp://93.184.216.34/'],
    ['not a URL', 'hooks please'],
  ])('refuses %s with 400 and the one message', async (_case, url) => {
    const answer = await addWebhook(server, name, owner.token, { url, events: ['deploy.published'] });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: 'bad_request', message: WEBHOOK_TARGET_REFUSED });
    expect(server.store.listWebhooks(server.store.getSite(name)!.id)).toEqual([]);
  });
});

describe('what a delivery does not do', () => {
  const server = useTestServer({
    PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1',
    PLINTH_WEBHOOK_POLL_MS: POLL_MS,
    PLINTH_WEBHOOK_RETRY_FOR_S: '0',
    PLINTH_WEBHOOK_DISABLE_AFTER: '2',
    PLINTH_WEBHOOK_TIMEOUT_S: '1',
  });
  let owner: TestAccount;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    owner = await accountWithToken(server.store, 'builder');
    receiver = await startReceiver((request) => {
      if (request.path === '/moved') return { redirect: '/elsewhere' };
      if (request.path === '/elsewhere') return 204;
      if (request.path === '/slow') return 'hang';
      return 500;
    });
  });
  afterAll(() => receiver?.close());

  const deliveriesOf = async (name: string, id: string) =>
    (await api(server, { path: `/v1/sites/${name}/webhooks/${id}/deliveries`, token: owner.token })).json.deliveries as Array<Record<string, unknown>>;

  it('follows no redirect: a 3xx is the final answer', async () => {
    const site = await accountSite(server.store, owner);
    const hook = await addWebhook(server, site.name, owner.token, { url: receiver.url('/moved'), events: ['deploy.published'] });
    await publish(server.port, owner.token, site.name, '<h1>moved</h1>');
    expect(await waitUntil(async () => (await deliveriesOf(site.name, hook.json.id))[0]?.state === 'failed', 10_000)).toBe(true);
    expect((await deliveriesOf(site.name, hook.json.id))[0]).toMatchObject({ attempts: 1, last_status: 302 });
    expect(receiver.received.some((request) => request.path === '/elsewhere')).toBe(false);
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const site = await accountSite(server.store, owner);
    const hook = await addWebhook(server, site.name, owner.token, { url: receiver.url('/slow'), events: ['deploy.published'] });
    await publish(server.port, owner.token, site.name, '<h1>slow</h1>');
    expect(await waitUntil(async () => (await deliveriesOf(site.name, hook.json.id))[0]?.state === 'failed', 10_000)).toBe(true);
    expect((await deliveriesOf(site.name, hook.json.id))[0]).toMatchObject({ attempts: 1, last_error: 'timeout' });
  });

  it('disables a webhook after deliveries in a row were given up on, with a notice in the log', async () => {
    const site = await accountSite(server.store, owner);
    const hook = await addWebhook(server, site.name, owner.token, { url: receiver.url('/broken'), events: ['deploy.published'] });
    const state = async () => (await api(server, { path: `/v1/sites/${site.name}/webhooks`, token: owner.token })).json.webhooks[0];
    await publish(server.port, owner.token, site.name, '<h1>a</h1>');
    expect(await waitUntil(async () => (await state()).failures === 1, 10_000)).toBe(true);
    expect((await state()).state).toBe('active');
    await publish(server.port, owner.token, site.name, '<h1>b</h1>');
    expect(await waitUntil(async () => (await state()).state === 'disabled', 10_000)).toBe(true);
    expect(await state()).toMatchObject({ failures: 2, disabled_at: expect.stringMatching(/^\d{4}-/) });
    const log = await api(server, { path: `/v1/sites/${site.name}/events`, token: owner.token });
    expect(log.json.events[0]).toMatchObject({ kind: 'webhook.disabled', actor: 'system', details: { webhook: hook.json.id, failures: 2 } });
    // Nothing more is queued for it (a publish queues its deliveries before it answers).
    await publish(server.port, owner.token, site.name, '<h1>c</h1>');
    expect(await deliveriesOf(site.name, hook.json.id)).toHaveLength(2);
  });
});

describe('a name that changes after it was registered', () => {
  // The stand-in DNS: each name leads to loopback while it is registered, then to what a case
  // says. The owner reads every attempt's error: which check refused would tell them which
  // internal names exist where the server resolves, and a name whose DNS never answers must not
  // hold the attempt (and the deliveries beside it) past its deadline.
  const answers = new Map<string, () => Promise<readonly { address: string; family: number }[]>>();
  const loopback = async () => [{ address: '127.0.0.1', family: 4 }];
  const server = useTestServer(
    { PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1', PLINTH_WEBHOOK_POLL_MS: POLL_MS, PLINTH_WEBHOOK_RETRY_FOR_S: '0', PLINTH_WEBHOOK_TIMEOUT_S: '1' },
    {
      webhookTransport: createWebhookTransport({
        allowLoopback: true,
        timeoutMs: 1000,
        maxResponseBytes: 1024,
        lookup: (host) => (answers.get(host) ?? loopback)(),
      }),
    },
  );
  let owner: TestAccount;

  beforeAll(async () => {
    owner = await accountWithToken(server.store, 'builder');
  });

  const deliveriesOf = async (name: string, id: string) =>
    (await api(server, { path: `/v1/sites/${name}/webhooks/${id}/deliveries`, token: owner.token })).json.deliveries as Array<Record<string, unknown>>;

  /** Registers `http://<host>:9/` (nothing listens there) while the name leads to loopback, then lets it lead elsewhere. */
  async function registeredThenChanged(host: string, now: () => Promise<readonly { address: string; family: number }[]>) {
    const site = await accountSite(server.store, owner);
    const hook = await addWebhook(server, site.name, owner.token, { url: `http://${host}:9/hook`, events: ['deploy.published'] });
    expect(hook.status).toBe(201);
    answers.set(host, now);
    await publish(server.port, owner.token, site.name, `<h1>${host}</h1>`);
    expect(await waitUntil(async () => (await deliveriesOf(site.name, hook.json.id))[0]?.state === 'failed', 10_000)).toBe(true);
    return (await deliveriesOf(site.name, hook.json.id))[0]!;
  }

  it('shows the same error for a name that leads inside now and one that no longer resolves', async () => {
    const inside = await registeredThenChanged('inside.test', async () => [{ address: '10.0.0.1', family: 4 }]);
    const gone = await registeredThenChanged('gone.test', () => Promise.reject(new Error('getaddrinfo ENOTFOUND gone.test')));
    expect(inside).toMatchObject({ attempts: 1, last_error: 'refused address' });
    expect(gone).toMatchObject({ attempts: 1, last_error: 'refused address' });
  });

  it('shows an attempt recorded before with its reason the same way', () => {
    const recorded = {
      id: 'msg_1',
      webhookId: 'wh_1',
      siteId: 'site_1',
      event: 'deploy.published',
      payload: '{}',
      createdAt: 0,
      state: 'failed' as const,
      attempts: 1,
      nextAt: 0,
    };
    expect(deliveryView({ ...recorded, lastError: 'refused address (not a public address)' }).last_error).toBe('refused address');
    expect(deliveryView({ ...recorded, lastError: 'refused address (name does not resolve)' }).last_error).toBe('refused address');
    expect(deliveryView({ ...recorded, lastError: 'timeout' }).last_error).toBe('timeout');
  });

  it('gives up on a name whose lookup never finishes at the deadline', async () => {
    const site = await accountSite(server.store, owner);
    answers.set('silent.test', () => new Promise(() => {}));
    // Registering it is refused, in time, like any name that cannot be checked.
    const refused = await addWebhook(server, site.name, owner.token, { url: 'http://silent.test:9/hook', events: ['deploy.published'] });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'bad_request', message: WEBHOOK_TARGET_REFUSED });
    const late = await registeredThenChanged('late.test', () => new Promise(() => {}));
    expect(late).toMatchObject({ attempts: 1, last_error: 'timeout' });
  });
});

describe('the events webhooks receive', () => {
  let clock = Date.now();
  const server = useTestServer({ PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1', PLINTH_WEBHOOK_POLL_MS: POLL_MS }, { now: () => clock });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: TestAccount;

  beforeAll(async () => {
    receiver = await startReceiver(() => 204);
    owner = await accountWithToken(server.store, 'builder');
  });
  afterAll(() => receiver?.close());

  const typesFor = (path: string) => receiver.received.filter((request) => request.path === path).map((request) => JSON.parse(request.body).type as string);

  it('sends deploy.failed for a refused update and site.rolled_back for a rollback, not what was not asked for', async () => {
    const site = await accountSite(server.store, owner);
    const hook = await addWebhook(server, site.name, owner.token, { url: receiver.url('/events'), events: ['deploy.failed', 'site.rolled_back'] });
    expect(hook.status).toBe(201);
    await publish(server.port, owner.token, site.name, '<h1>two</h1>');
    const stale = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>stale</h1>']], { site: site.name, base_revision: site.revision }),
    });
    expect(stale.status).toBe(409);
    const rolled = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: site.revision } });
    expect(rolled.status).toBe(201);
    expect(await waitUntil(() => typesFor('/events').length >= 2, 10_000)).toBe(true);
    // Only what is queued is sent, and each update queued its deliveries before it answered:
    // once those two are delivered, nothing more comes.
    const queued = () => server.store.deliveries.list(hook.json.id, 10);
    expect((await queued()).map((delivery) => delivery.event).sort()).toEqual(['deploy.failed', 'site.rolled_back']);
    expect(await waitUntil(async () => (await queued()).every((delivery) => delivery.state === 'delivered'), 10_000)).toBe(true);
    // Both may be in flight at once (up to three of a site are), so they may arrive in either order.
    expect(typesFor('/events').sort()).toEqual(['deploy.failed', 'site.rolled_back']);
    const failed = JSON.parse(receiver.received.find((request) => request.path === '/events' && JSON.parse(request.body).type === 'deploy.failed')!.body);
    expect(failed.data).toMatchObject({ site: { name: site.name }, actor: owner.account.email, code: 'conflict' });
  });

  it("sends site.expiring once, a day before an unclaimed site expires, to the site token's webhook", async () => {
    // The server looks for sites due a notice once a minute of its clock. A witness site due at
    // the look in question has its notice sent once that look is over, so its arrival says the
    // look happened: no fixed wait. Witnesses are made with the clock set back for a moment
    // (a look never runs on a clock that went back).
    const start = clock;
    const witness = async (madeAt: number, path: string): Promise<void> => {
      const now = clock;
      clock = madeAt;
      const made = await deployTo(server.port, { contentType: 'application/json', body: jsonDeployBody([['index.html', '<h1>witness</h1>']]) });
      clock = now;
      expect((await addWebhook(server, made.json.site.name, made.json.site_token, { url: receiver.url(path), events: ['site.expiring'] })).status).toBe(201);
    };
    // Due a day before its 72 hours are up: 30 s after the start.
    await witness(start - 48 * 3600_000 + 30_000, '/first-look');
    const created = await deployTo(server.port, { contentType: 'application/json', body: jsonDeployBody([['index.html', '<h1>anon</h1>']]) });
    const { name } = created.json.site;
    const hook = await addWebhook(server, name, created.json.site_token, { url: receiver.url('/expiry'), events: ['site.expiring'] });
    expect(hook.status).toBe(201);
    const queued = async () => (await server.store.deliveries.list(hook.json.id, 10)).length;
    // 72 hours to go: nothing yet.
    clock += 61_000;
    expect(await waitUntil(() => typesFor('/first-look').length === 1, 10_000)).toBe(true);
    expect(await queued()).toBe(0);
    expect(typesFor('/expiry')).toEqual([]);
    // 23 hours to go.
    clock += 49 * 3600_000;
    expect(await waitUntil(() => typesFor('/expiry').length === 1, 10_000)).toBe(true);
    // Due 49 hours and 90 s after the start: at the next look, not at the one just done.
    await witness(start + 3600_000 + 90_000, '/next-look');
    clock += 61_000;
    expect(await waitUntil(() => typesFor('/next-look').length === 1, 10_000)).toBe(true);
    expect(await queued()).toBe(1);
    expect(typesFor('/expiry')).toEqual(['site.expiring']);
    const notice = JSON.parse(receiver.received.find((request) => request.path === '/expiry')!.body);
    expect(notice.data).toMatchObject({ site: { name }, actor: 'system', expires_at: created.json.site.expires_at });
  });
});
