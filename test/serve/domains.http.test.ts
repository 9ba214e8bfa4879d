import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTlsAsk, type TlsAsk } from '../../src/runtime/tls-ask.js';
import { createDomainServing } from '../../src/serve/index.js';
import { accountSite, accountWithToken, api, unique, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';

/** Serving by custom domain, the redirects to a primary domain, and the TLS terminator's question. */

let owner: TestAccount;
let ask: TlsAsk;

const server = useTestServer();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  const serving = createDomainServing({ store: server.store, hosts: server.config.hosts, scheme: 'https' });
  ask = await startTlsAsk({ serving, host: '127.0.0.1', port: 0, log: createLogger({ level: 'silent' }) });
});

afterAll(async () => {
  await ask?.close();
});

/** A domain attached to the site and marked active, as a passed TXT check leaves it. */
async function activeDomain(siteId: string, domain: string): Promise<void> {
  const added = await server.store.addDomain({ domain, siteId, token: 'plinth-verify=x', maxPerSite: 10 });
  if (!added.ok) throw new Error(added.reason);
  await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: Date.now() });
}

const visitHost = (host: string, path = '/') => request({ port: server.port, host, path });
const asks = (domain: string, path = '/', method = 'GET') =>
  request({ port: ask.port, host: '127.0.0.1', path: `${path}?domain=${encodeURIComponent(domain)}`, method }).then((res) => res.status);

describe('serving by custom domain', () => {
  it('serves an active domain exactly as the site address does', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>mine</h1>', 'about.html': 'about me' } });
    const domain = `www.${unique('serve')}.example.org`;
    await activeDomain(site.id, domain);
    for (const path of ['/', '/about', '/missing']) {
      const own = await visitHost(`${site.name}.sites.localhost`, path);
      const custom = await visitHost(domain, path);
      expect(custom.status, path).toBe(own.status);
      expect(custom.text, path).toBe(own.text);
      for (const header of ['content-type', 'etag', 'cache-control', 'x-content-type-options'])
        expect(custom.headers[header], header).toBe(own.headers[header]);
    }
  });

  it('serves nothing for a pending, failed or suspended domain', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('pending')}.example.org`;
    const added = await server.store.addDomain({ domain, siteId: site.id, token: 't', maxPerSite: 10 });
    expect((await visitHost(domain)).status).toBe(404);
    for (const status of ['failed', 'suspended'] as const) {
      await server.store.updateDomain(domain, added.ok ? added.record.claim : '', { status });
      expect((await visitHost(domain)).status, status).toBe(404);
    }
  });

  it('stops serving a domain the moment it is removed, and serves it for its new site once active there', async () => {
    const first = await accountSite(server.store, owner, [], { files: { 'index.html': 'first' } });
    const second = await accountSite(server.store, owner, [], { files: { 'index.html': 'second' } });
    const domain = `${unique('moved')}.example.org`;
    await activeDomain(first.id, domain);
    expect((await visitHost(domain)).text).toBe('first');
    await server.store.removeDomain(first.id, domain);
    expect((await visitHost(domain)).status).toBe(404);
    await activeDomain(second.id, domain);
    expect((await visitHost(domain)).text).toBe('second');
  });

  it('follows a rename: the domain serves the site under its new name', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': 'renamed site' } });
    const domain = `${unique('rn')}.example.org`;
    await activeDomain(site.id, domain);
    const renamed = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: unique('renamed-') } });
    expect(renamed.status).toBe(200);
    const answer = await visitHost(domain);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('renamed site');
  });

  it('answers 410 on the domain of a deleted site, as on its address', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('gone')}.example.org`;
    await activeDomain(site.id, domain);
    await server.store.setSiteState(site.name, 'deleted');
    expect((await visitHost(domain)).status).toBe(410);
  });

  // Redirects take the scheme of PLINTH_PUBLIC_SITE_URL: http on this test server.
  it('redirects the other half of an apex/www pair to the primary, and the site address when asked', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': 'pair' } });
    const apex = `${unique('pair')}.org`;
    await activeDomain(site.id, apex);
    await activeDomain(site.id, `www.${apex}`);
    // No primary yet: both serve.
    expect((await visitHost(apex)).text).toBe('pair');
    expect((await visitHost(`www.${apex}`)).text).toBe('pair');

    await server.store.setPrimaryDomain(site.id, `www.${apex}`, true, false);
    const toWww = await visitHost(apex, '/about?x=1');
    expect(toWww.status).toBe(301);
    expect(toWww.headers.location).toBe(`http://www.${apex}/about?x=1`);
    expect((await visitHost(`www.${apex}`)).text).toBe('pair');
    expect((await visitHost(`${site.name}.sites.localhost`)).text).toBe('pair');

    const marked = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/domains`,
      token: owner.token,
      body: { domain: apex, primary: true, redirect_site_address: true },
    });
    expect(marked.status).toBe(200);
    expect(marked.json).toMatchObject({ domain: apex, primary: true, redirect_site_address: true });
    const toApex = await visitHost(`www.${apex}`, '/a');
    expect(toApex.headers.location).toBe(`http://${apex}/a`);
    const ownAddress = await visitHost(`${site.name}.sites.localhost`, '/b');
    expect(ownAddress.status).toBe(301);
    expect(ownAddress.headers.location).toBe(`http://${apex}/b`);
    expect((await visitHost(apex)).text).toBe('pair');

    // Unmarking stops both redirects.
    await api(server, { method: 'POST', path: `/v1/sites/${site.name}/domains`, token: owner.token, body: { domain: apex, primary: false } });
    expect((await visitHost(`${site.name}.sites.localhost`)).text).toBe('pair');
    expect((await visitHost(`www.${apex}`)).text).toBe('pair');
  });
});

describe("the TLS terminator's question", () => {
  it('says yes only for site hosts and active custom domains', async () => {
    const site = await accountSite(server.store, owner);
    const active = `${unique('ask')}.example.org`;
    const pending = `${unique('askp')}.example.org`;
    await activeDomain(site.id, active);
    await server.store.addDomain({ domain: pending, siteId: site.id, token: 't', maxPerSite: 10 });
    expect(await asks(`${site.name}.sites.localhost`)).toBe(200);
    expect(await asks(active)).toBe(200);
    // A revision's preview address is the site's too, for a revision it has.
    expect(await asks(`1--${site.name}.sites.localhost`)).toBe(200);
    for (const refused of [
      pending,
      // Only the spelling a terminator asks for: another would be a certificate of its own.
      active.toUpperCase(),
      `${active}.`,
      `2--${site.name}.sites.localhost`,
      `2--unknown-${site.name}.sites.localhost`,
      `unknown-${site.name}.sites.localhost`,
      'sites.localhost',
      'api.localhost',
      'app.localhost',
      'localhost',
      `a.b.sites.localhost`,
      `evil.${active}`,
      '127.0.0.1',
      '',
    ]) {
      expect(await asks(refused), refused).toBe(404);
    }
    expect(await asks(active, '/other')).toBe(404);
    expect(await asks(active, '/', 'POST')).toBe(404);
    expect((await request({ port: ask.port, host: '127.0.0.1', path: '/' })).status).toBe(404);
  });

  it("says no once the domain's site is deleted", async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('askd')}.example.org`;
    await activeDomain(site.id, domain);
    expect(await asks(domain)).toBe(200);
    await server.store.setSiteState(site.name, 'deleted');
    expect(await asks(domain)).toBe(404);
    expect(await asks(`${site.name}.sites.localhost`)).toBe(404);
  });
});
