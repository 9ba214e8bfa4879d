import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDns, useTestServer } from '../helpers/fixtures.js';
import { startTestServer } from '../helpers/server.js';
import { createLogger } from '../../src/log.js';
import { createTxtLookup } from '../../src/outbound/index.js';
import { createDomainChecker } from '../../src/sites/index.js';
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

  it('says in the listing what happened and what to do once the periodic check suspends or fails a domain, and logs it as the system', async () => {
    const own = await startTestServer({ PLINTH_DNS_SERVERS: dns.address, PLINTH_DOMAINS_BUILDER: '3' });
    try {
      const person = await accountWithToken(own.store, 'builder');
      const site = await accountSite(own.store, person);
      const [kept, never] = [`www.${unique('kept')}.example.org`, `${unique('never')}.example.net`];
      const added: Record<string, { name: string; value: string }> = {};
      for (const domain of [kept, never]) {
        const res = await api(own, { method: 'POST', path: domainsOf(site.name), token: person.token, body: { domain } });
        expect(res.status).toBe(201);
        added[domain] = res.json.verification;
      }
      dns.txt.set(added[kept]!.name, [added[kept]!.value]);
      const verified = await api(own, { method: 'POST', path: `${domainsOf(site.name)}/${kept}/verify`, token: person.token });
      expect(verified.json).toMatchObject({ status: 'active' });

      let clock = Date.now();
      const check = createDomainChecker({
        store: own.store,
        config: own.config,
        log: createLogger({ level: 'silent' }),
        now: () => clock,
        lookup: createTxtLookup(own.config.domains.dnsServers),
      });
      const listed = async (domain: string) =>
        ((await api(own, { path: domainsOf(site.name), token: person.token })).json.domains as Array<Record<string, any>>).find((d) => d.domain === domain)!;
      expect(await listed(kept)).not.toHaveProperty('agent_message');

      // The record goes; the next daily check finds it missing, and the one after the grace period suspends the domain.
      dns.txt.delete(added[kept]!.name);
      clock += 25 * 3600_000;
      await check();
      const failing = await listed(kept);
      expect(failing.status).toBe('active');
      expect(failing.agent_message).toContain(`still serves ${site.name}`);
      expect(failing.agent_message).toContain(
        `add the TXT record again at the DNS host of ${kept}: named ${added[kept]!.name}, with the value ${added[kept]!.value}`,
      );
      clock += Math.max(own.config.domains.graceMs, 7 * 24 * 3600_000);
      expect(await check()).toMatchObject({ suspended: 1, failed: 1 });

      const suspended = await listed(kept);
      expect(suspended.status).toBe('suspended');
      const message: string = suspended.agent_message;
      expect(message).toContain(`${kept} is suspended: it no longer serves ${site.name}`);
      expect(message).toContain(`add the TXT record again at the DNS host of ${kept}: named _plinth-challenge.${kept}, with the value ${added[kept]!.value}`);
      expect(message).toContain(`Then check again with POST /v1/sites/${site.name}/domains/${kept}/verify`);
      expect(message).toContain('No TXT record was found');

      const failed = await listed(never);
      expect(failed.status).toBe('failed');
      expect(failed.agent_message).toContain(`${never} failed`);
      expect(failed.agent_message).toContain(
        `create the TXT record at the DNS host of ${never}: named _plinth-challenge.${never}, with the value ${added[never]!.value}`,
      );
      expect(failed.agent_message).toContain(`POST /v1/sites/${site.name}/domains/${never}/verify`);

      // The verify answer says the same.
      const again = await api(own, { method: 'POST', path: `${domainsOf(site.name)}/${kept}/verify`, token: person.token });
      expect(again.json).toMatchObject({ status: 'suspended', agent_message: expect.stringContaining(`${kept} is suspended`) });

      // Back in DNS: the check makes it active again, and the listing has nothing to say.
      dns.txt.set(added[kept]!.name, [added[kept]!.value]);
      clock += 25 * 3600_000;
      expect(await check()).toMatchObject({ activated: 1 });
      expect(await listed(kept)).toMatchObject({ status: 'active' });
      expect(await listed(kept)).not.toHaveProperty('agent_message');

      const events = (await api(own, { path: `/v1/sites/${site.name}/events`, token: person.token })).json.events as Array<Record<string, any>>;
      const domainEvents = events
        .filter((event) => /^domain\.(verified|suspended|failed)$/.test(event.kind))
        .map((event) => [event.kind, event.actor, event.details]);
      // Newest first; the two changes of one run are in either order.
      expect(domainEvents).toHaveLength(4);
      expect(domainEvents[0]).toEqual(['domain.verified', 'system', { domain: kept, from: 'suspended' }]);
      expect(domainEvents.slice(1, 3)).toEqual(
        expect.arrayContaining([
          ['domain.failed', 'system', { domain: never, from: 'pending', reason: expect.stringContaining('within 7 days') }],
          ['domain.suspended', 'system', { domain: kept, from: 'active', reason: expect.stringContaining('No TXT record was found') }],
        ]),
      );
      expect(domainEvents[3]).toEqual(['domain.verified', person.account.email, { domain: kept, from: 'pending' }]);
    } finally {
      await own.close();
    }
  });
});
