import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDns, useTestServer } from '../helpers/fixtures.js';
import { startTestServer } from '../helpers/server.js';
import { accountSite, accountWithToken, anonymousSite, api, unique, type TestAccount } from './api-helpers.js';

/** Custom domains over REST: attach, the records to create, verification by TXT, caps, refusals. */

let owner: TestAccount;

const dns = useTestDns();
const server = useTestServer(() => ({ PLINTH_DNS_SERVERS: dns.address, PLINTH_DOMAINS_FREE: '0', PLINTH_DOMAINS_BUILDER: '3' }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const domainsOf = (name: string) => `/v1/sites/${name}/domains`;

describe('custom domains over REST', () => {
  it('attaches a domain as pending and says exactly which DNS records to create', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `www.${unique('d')}.example.org`;
    const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain: domain.toUpperCase() + '.' } });
    expect(added.status).toBe(201);
    const body = added.json as Record<string, unknown> & { verification: { type: string; name: string; value: string }; records: unknown[] };
    expect(body).toMatchObject({ domain, status: 'pending', target: `${site.name}.sites.localhost`, primary: false });
    expect(body.verification).toMatchObject({ type: 'TXT', name: `_plinth-challenge.${domain}` });
    expect(body.verification.value).toMatch(/^plinth-verify=[A-Za-z0-9_-]{32}$/);
    expect(body.records).toEqual([body.verification, { type: 'CNAME', name: domain, value: `${site.name}.sites.localhost` }]);
    expect(body.agent_message).toContain(`_plinth-challenge.${domain}`);
    expect(body.agent_message).toContain(body.verification.value);
    expect(body.agent_message).toContain(`CNAME record for ${domain} pointing to ${site.name}.sites.localhost`);

    const listed = await api(server, { path: domainsOf(site.name), token: owner.token });
    expect(listed.status).toBe(200);
    expect((listed.json as { domains: Array<{ domain: string; status: string }> }).domains).toEqual([expect.objectContaining({ domain, status: 'pending' })]);
  });

  it('offers an ALIAS record for an apex domain', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('apex')}.org`;
    const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    expect((added.json as { records: Array<{ type: string }> }).records[1]).toMatchObject({ type: 'ALIAS', name: domain });
    expect((added.json as { agent_message: string }).agent_message).toContain('ALIAS');
  });

  it('knows an apex under a two-label public suffix, and a name under a private one', async () => {
    const site = await accountSite(server.store, owner);
    const recordFor = async (domain: string) =>
      ((await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } })).json as { records: Array<{ type: string }> })
        .records[1];
    expect(await recordFor(`${unique('apex')}.co.uk`)).toMatchObject({ type: 'ALIAS' });
    expect(await recordFor(`www.${unique('apex')}.co.uk`)).toMatchObject({ type: 'CNAME' });
    expect(await recordFor(`${unique('pages')}.github.io`)).toMatchObject({ type: 'CNAME' });
  });

  it('offers an ALIAS record for an apex domain under a country’s second level (example.co.uk), where a CNAME cannot be', async () => {
    const site = await accountSite(server.store, owner);
    for (const domain of [`${unique('apex')}.co.uk`, `${unique('apex')}.com.au`]) {
      const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
      expect(added.status, added.text).toBe(201);
      expect((added.json as { records: Array<{ type: string }> }).records[1]).toMatchObject({ type: 'ALIAS', name: domain });
      expect((added.json as { agent_message: string }).agent_message).toContain(`ALIAS (also called ANAME or CNAME flattening) record for ${domain}`);
      await api(server, { method: 'DELETE', path: `${domainsOf(site.name)}/${domain}`, token: owner.token });
    }
  });

  it('verifies by the TXT record: pending with the reason until it is there, then active', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('v')}.example.net`;
    const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    const { verification } = added.json as { verification: { name: string; value: string } };

    const early = await api(server, { method: 'POST', path: `${domainsOf(site.name)}/${domain}/verify`, token: owner.token });
    expect(early.status).toBe(200);
    expect(early.json).toMatchObject({ status: 'pending', reason: `No TXT record was found at _plinth-challenge.${domain}.` });

    dns.txt.set(verification.name, ['v=spf1 -all', 'something-else']);
    const wrong = await api(server, { method: 'POST', path: `${domainsOf(site.name)}/${domain}/verify`, token: owner.token });
    expect(wrong.json).toMatchObject({ status: 'pending', reason: expect.stringContaining('does not hold the value') });

    dns.txt.set(verification.name, ['v=spf1 -all', verification.value]);
    const done = await api(server, { method: 'POST', path: `${domainsOf(site.name)}/${domain}/verify`, token: owner.token });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ domain, status: 'active', verified_at: expect.any(String) });
    expect(done.json).not.toHaveProperty('reason');
    expect(dns.asked).toContain(`TXT _plinth-challenge.${domain}`);
  });

  it('removes a domain, after which it is not found', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('r')}.example.com`;
    await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    const removed = await api(server, { method: 'DELETE', path: `${domainsOf(site.name)}/${domain}`, token: owner.token });
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ domain, removed: true });
    expect((await api(server, { method: 'DELETE', path: `${domainsOf(site.name)}/${domain}`, token: owner.token })).status).toBe(404);
    expect((await api(server, { path: domainsOf(site.name), token: owner.token })).json).toEqual({ domains: [] });
  });

  it('caps domains per site by plan, and a plan with 0 has none', async () => {
    const site = await accountSite(server.store, owner);
    for (let i = 0; i < 3; i++) {
      expect(
        (await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain: `${unique('c')}.example.org` } })).status,
      ).toBe(201);
    }
    const over = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain: `${unique('c')}.example.org` } });
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ error: { code: 'limit' } });

    const free = await accountWithToken(server.store, 'free');
    const freeSite = await accountSite(server.store, free);
    const none = await api(server, { method: 'POST', path: domainsOf(freeSite.name), token: free.token, body: { domain: `${unique('f')}.example.org` } });
    expect(none.status).toBe(429);
    expect(none.json).toMatchObject({ error: { code: 'limit', message: 'The free plan has no custom domains.' } });
  });

  it('lets only owners with account credentials attach, and members list', async () => {
    const editor = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [[editor, 'editor']]);
    const domain = `${unique('o')}.example.org`;
    expect((await api(server, { method: 'POST', path: domainsOf(site.name), body: { domain } })).status).toBe(401);
    expect((await api(server, { method: 'POST', path: domainsOf(site.name), token: editor.token, body: { domain } })).status).toBe(403);
    expect((await api(server, { path: domainsOf(site.name), token: editor.token })).status).toBe(200);
    const stranger = await accountWithToken(server.store, 'builder');
    expect((await api(server, { path: domainsOf(site.name), token: stranger.token })).status).toBe(404);
    const anon = await anonymousSite(server.store, Date.now() + 3600_000);
    const bySiteToken = await api(server, { method: 'POST', path: domainsOf(anon.name), token: anon.siteToken, body: { domain } });
    expect(bySiteToken.status).toBe(403);
  });

  it('starts a failed domain over when it is added again, even at the cap', async () => {
    const small = await startTestServer({ PLINTH_DNS_SERVERS: dns.address, PLINTH_DOMAINS_BUILDER: '1' });
    try {
      const person = await accountWithToken(small.store, 'builder');
      const site = await accountSite(small.store, person);
      const domain = `${unique('again')}.example.org`;
      await api(small, { method: 'POST', path: domainsOf(site.name), token: person.token, body: { domain } });
      const first = small.store.getDomain(domain)!;
      await small.store.updateDomain(domain, first.claim, { status: 'failed', reason: 'not found in 7 days' });
      const again = await api(small, { method: 'POST', path: domainsOf(site.name), token: person.token, body: { domain } });
      expect(again.status).toBe(201);
      expect(again.json).toMatchObject({ status: 'pending' });
      expect(again.json).not.toHaveProperty('reason');
      expect(small.store.getDomain(domain)!.claim).not.toBe(first.claim);
      expect(small.store.listDomains(site.id)).toHaveLength(1);
      // An active one added again is left as it is (200), and keeps its redirect when only primary is sent.
      await small.store.updateDomain(domain, small.store.getDomain(domain)!.claim, { status: 'active' });
      await api(small, { method: 'POST', path: domainsOf(site.name), token: person.token, body: { domain, primary: true, redirect_site_address: true } });
      const same = await api(small, { method: 'POST', path: domainsOf(site.name), token: person.token, body: { domain, primary: true } });
      expect(same.status).toBe(200);
      expect(same.json).toMatchObject({ status: 'active', primary: true, redirect_site_address: true });
    } finally {
      await small.close();
    }
  });
});
