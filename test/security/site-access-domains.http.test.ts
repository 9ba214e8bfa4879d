import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, unique, type TestAccount } from '../api/api-helpers.js';
import { AppClient } from '../app/http-client.js';
import { request, type TestResponse } from '../helpers/http.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Private sites at their custom domains: the password form and the members-only hop follow the
 * host the visitor used, and the cookie and ticket are bound to it. The hop's way back is never
 * the attacker's to choose: only an active domain of the same site.
 */

let owner: TestAccount;
const PASSWORD = 'correct horse battery';
let counter = 0;

const FILES = { 'index.html': '<h1>secret home</h1>', 'about.html': '<h1>secret about</h1>' };
const at = (host: string, path = '/', headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<TestResponse> =>
  request({ port: server.port, host, path, headers, method, body });
const siteHost = (name: string): string => `${name}.sites.localhost:${server.port}`;
const cookieOf = (res: TestResponse): string => String(([] as string[]).concat(res.headers['set-cookie'] ?? [])[0] ?? '').split(';')[0]!;

/** A domain attached to the site and marked active, as a passed TXT check leaves it. */
async function activeDomain(siteId: string, domain: string, status: 'active' | 'pending' = 'active'): Promise<void> {
  const added = await server.store.addDomain({ domain, siteId, token: 'plinth-verify=x', maxPerSite: 10 });
  if (!added.ok) throw new Error(added.reason);
  if (status === 'active') await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: Date.now() });
}

async function privateSite(mode: 'password' | 'members'): Promise<{ name: string; id: string; domain: string }> {
  const site = await accountSite(server.store, owner, [], { files: FILES });
  const set = await api(server, {
    method: 'PUT',
    path: `/v1/sites/${site.name}/access`,
    token: owner.token,
    body: mode === 'password' ? { mode, password: PASSWORD } : { mode },
  });
  expect(set.status).toBe(200);
  const domain = `${unique('priv')}.example.org`;
  await activeDomain(site.id, domain);
  return { ...site, domain };
}

const server = useAppServer({ PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '0' });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

describe('password sites at a custom domain', () => {
  const login = (host: string, origin: string, password = PASSWORD) =>
    at(
      host,
      '/.plinth/login',
      { 'content-type': 'application/x-www-form-urlencoded', origin },
      'POST',
      new URLSearchParams({ password, return: '/about' }).toString(),
    );

  it('signs in through the form posted on the domain, with a cookie for that host only', async () => {
    const site = await privateSite('password');
    const host = `${site.domain}:${server.port}`;
    const page = await at(host, '/about');
    expect(page.status).toBe(401);
    expect(page.text).toContain('action="/.plinth/login"');
    const ok = await login(host, `http://${site.domain}:${server.port}`);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/about');
    expect(String(ok.headers['set-cookie'])).not.toMatch(/Domain=/i);
    const cookie = cookieOf(ok);
    const about = await at(host, '/about', { cookie });
    expect(about.status).toBe(200);
    expect(about.text).toContain('secret about');
    // Bound to the host it was made on: not the site's own address, and the other way round.
    expect((await at(siteHost(site.name), '/about', { cookie })).status).toBe(401);
    const own = cookieOf(await login(siteHost(site.name), `http://${siteHost(site.name)}`));
    expect((await at(siteHost(site.name), '/about', { cookie: own })).status).toBe(200);
    expect((await at(host, '/about', { cookie: own })).status).toBe(401);
  });

  it('refuses the form posted from anywhere else, the site address included', async () => {
    const site = await privateSite('password');
    const other = await privateSite('password');
    const host = `${site.domain}:${server.port}`;
    for (const origin of [
      `http://${siteHost(site.name)}`,
      `http://${other.domain}:${server.port}`,
      `https://${site.domain}`,
      `http://${site.domain}.evil.example:${server.port}`,
      'http://evil.example',
      'null',
    ]) {
      const res = await login(host, origin);
      expect(res.status, origin).toBe(403);
      expect(res.headers['set-cookie'], origin).toBeUndefined();
    }
  });
});

describe('members-only sites at a custom domain', () => {
  async function member(site: { id: string }): Promise<AppClient> {
    const client = new AppClient(server);
    const email = `member-${++counter}@example.com`;
    await client.signIn(email);
    await server.store.setMember(site.id, server.store.getAccountByEmail(email)!.id, 'viewer');
    return client;
  }

  it('takes a member through the app and back to the domain, with a ticket and cookie bound to it', async () => {
    const site = await privateSite('members');
    const client = await member(site);
    const host = `${site.domain}:${server.port}`;

    const start = await at(host, `/.plinth/login?return=${encodeURIComponent('/about')}`);
    expect(start.status).toBe(303);
    const hop = new URL(start.headers.location!);
    expect(hop.origin).toBe(server.appUrl);
    expect(hop.searchParams.get('domain')).toBe(site.domain);
    // The 401 page's sign-in link says the same.
    expect((await at(host, '/about')).text).toContain(`domain=${site.domain}`);

    const page = await client.get(`${hop.pathname}${hop.search}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Open ${site.domain}`);
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' http://${site.domain}:${server.port}`);
    const issued = await client.post('/site-access', {
      site: site.name,
      domain: site.domain,
      return: '/about',
      csrf: await client.formToken(`${hop.pathname}${hop.search}`),
    });
    expect(issued.status).toBe(303);
    const ticketUrl = new URL(issued.headers.location!);
    expect(ticketUrl.host).toBe(host);
    expect(ticketUrl.pathname).toBe('/.plinth/ticket');

    const redeemed = await at(host, `${ticketUrl.pathname}${ticketUrl.search}`);
    expect(redeemed.status).toBe(303);
    expect(redeemed.headers.location).toBe('/about');
    const cookie = cookieOf(redeemed);
    const about = await at(host, '/about', { cookie });
    expect(about.status).toBe(200);
    expect(about.text).toContain('secret about');
    expect((await at(siteHost(site.name), '/about', { cookie })).status).toBe(401);
  });

  it('never sends the member to a host the site does not own', async () => {
    const site = await privateSite('members');
    const other = await privateSite('members');
    const pending = `${unique('pending')}.example.org`;
    await activeDomain(site.id, pending, 'pending');
    const client = await member(site);
    for (const domain of [other.domain, pending, 'evil.example', `${site.domain}.evil.example`, `evil.${site.domain}`, `${site.name}.sites.localhost`]) {
      const page = await client.get(`/site-access?site=${site.name}&domain=${encodeURIComponent(domain)}&return=/about`);
      expect(page.status, domain).toBe(400);
      expect(page.text).not.toContain(`Open ${domain}`);
      const issued = await client.post('/site-access', { site: site.name, domain, return: '/about', csrf: await client.formToken('/') });
      expect(issued.status, domain).toBe(400);
      expect(issued.headers.location, domain).toBeUndefined();
    }
    for (const domain of ['', 'EVIL.EXAMPLE', 'evil.example:8080', 'evil.example/x', 'http://evil.example', 'evil']) {
      const issued = await client.post('/site-access', { site: site.name, domain, return: '/about', csrf: await client.formToken('/') });
      expect(issued.status, domain).toBe(400);
      expect(issued.headers.location, domain).toBeUndefined();
    }
    // A domain and a preview at once name no address.
    const both = await client.post('/site-access', { site: site.name, domain: site.domain, preview: '1', csrf: await client.formToken('/') });
    expect(both.status).toBe(400);
    // The site's own address still works without a domain.
    const own = await client.post('/site-access', { site: site.name, return: '/', csrf: await client.formToken('/') });
    expect(new URL(own.headers.location!).host).toBe(siteHost(site.name));
  });

  it('refuses a ticket made for the site address at the domain, and one for another site’s domain', async () => {
    const site = await privateSite('members');
    const other = await privateSite('members');
    const client = await member(site);
    const ownTicket = await client.post('/site-access', { site: site.name, return: '/', csrf: await client.formToken('/') });
    const own = new URL(ownTicket.headers.location!);
    expect((await at(`${site.domain}:${server.port}`, `${own.pathname}${own.search}`)).status).toBe(401);
    await server.store.setMember(other.id, server.store.getAccountByEmail(`member-${counter}@example.com`)!.id, 'viewer');
    const otherTicket = await client.post('/site-access', { site: other.name, domain: other.domain, return: '/', csrf: await client.formToken('/') });
    const forOther = new URL(otherTicket.headers.location!);
    expect(forOther.host).toBe(`${other.domain}:${server.port}`);
    expect((await at(`${site.domain}:${server.port}`, `${forOther.pathname}${forOther.search}`)).status).toBe(401);
  });
});
