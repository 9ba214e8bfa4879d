import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, unique, type TestAccount } from '../api/api-helpers.js';
import { useTestDns, useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';

/**
 * Custom domains under attack: names that are not the caller's to claim (the service's own,
 * IPs, another site's active domain), another account's claim on the same domain (it must not push
 * a pending claim out, nor win without its own TXT value), verification with a record left for
 * someone else or against a claim that was removed meanwhile, Host header tricks, and the TLS ask
 * question on public hosts.
 */

let owner: TestAccount;

const dns = useTestDns();
const server = useTestServer(() => ({ PLINTH_DNS_SERVERS: dns.address }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const domainsOf = (name: string) => `/v1/sites/${name}/domains`;
const visitHost = (host: string, path = '/') => request({ port: server.port, host, path });

/** A domain attached to the site and marked active, as a passed TXT check leaves it. */
async function activeDomain(siteId: string, domain: string): Promise<void> {
  const added = await server.store.addDomain({ domain, siteId, token: 'plinth-verify=x', maxPerSite: 10 });
  if (!added.ok) throw new Error(added.reason);
  await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: Date.now() });
}

describe('attacks on custom domains', () => {
  it.each([
    ['an IPv4 literal', '203.0.113.7'],
    ['an IPv6 literal', '[2001:db8::1]'],
    ['a bare IPv6 literal', '2001:db8::1'],
    ['a name with no dot', 'intranet'],
    ['a name over 253 characters', `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.org`],
    ['a label over 63 characters', `${'a'.repeat(64)}.example.org`],
    ['the site domain itself', 'sites.localhost'],
    ['a name under the site domain', 'other-site.sites.localhost'],
    ['the API host', 'api.localhost'],
    ['the app host', 'APP.localhost.'],
    ['a local-only name', 'printer.local'],
    ['a URL', 'https://www.example.org/'],
    ['a name with a port', 'www.example.org:443'],
    ['a wildcard', '*.example.org'],
    ['an empty string', ''],
    ['a number', 42],
    ['a numeric top-level label', 'example.123'],
    // Shared by many owners: nobody's to serve a site at (ICANN's and the list's private section).
    ['a public suffix', 'co.uk'],
    ['a private public suffix', 'github.io'],
  ])('refuses %s', async (_what, domain) => {
    const site = await accountSite(server.store, owner);
    const refused = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    expect(refused.status, JSON.stringify(refused.json)).toBe(400);
    // A value of the wrong type breaks the body's shape, whose refusal says so in words.
    if (typeof domain !== 'string') expect(refused.json.error.message).toBe('domain must be a string.');
    expect(refused.json).toMatchObject({ error: { code: 'bad_request', details: { field: 'domain' } } });
  });

  it('stores an internationalised name as punycode', async () => {
    const site = await accountSite(server.store, owner);
    const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain: 'Bücher.example' } });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ domain: 'xn--bcher-kva.example' });
  });

  it("refuses another site's active domain, and cannot verify with that site's record", async () => {
    const victimSite = await accountSite(server.store, owner);
    const domain = `${unique('t')}.example.org`;
    const added = await api(server, { method: 'POST', path: domainsOf(victimSite.name), token: owner.token, body: { domain } });
    const { verification } = added.json as { verification: { name: string; value: string } };
    dns.txt.set(verification.name, [verification.value]);
    expect((await api(server, { method: 'POST', path: `${domainsOf(victimSite.name)}/${domain}/verify`, token: owner.token })).json).toMatchObject({
      status: 'active',
    });

    const attacker = await accountWithToken(server.store, 'builder');
    const attackerSite = await accountSite(server.store, attacker);
    const taken = await api(server, { method: 'POST', path: domainsOf(attackerSite.name), token: attacker.token, body: { domain } });
    expect(taken.status).toBe(409);
    expect(taken.json).toMatchObject({ error: { code: 'conflict' } });
    expect((await api(server, { method: 'DELETE', path: `${domainsOf(attackerSite.name)}/${domain}`, token: attacker.token })).status).toBe(404);
    expect((await api(server, { method: 'POST', path: `${domainsOf(attackerSite.name)}/${domain}/verify`, token: attacker.token })).status).toBe(404);
    expect(server.store.getDomain(domain)).toMatchObject({ siteId: victimSite.id, status: 'active' });
  });

  it('a check that finishes after the domain was removed changes nothing', async () => {
    const site = await accountSite(server.store, owner);
    const domain = `${unique('s')}.example.org`;
    const added = await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    const { verification } = added.json as { verification: { name: string; value: string } };
    dns.txt.set(verification.name, [verification.value]);
    const record = server.store.getDomain(domain)!;
    await server.store.removeDomain(site.id, domain);
    // The stale claim cannot be brought back…
    expect(await server.store.updateDomain(domain, record.claim, { status: 'active' })).toBeUndefined();
    expect(server.store.getDomain(domain)).toBeUndefined();
    // …nor can a new claim of the same domain be changed through the old one.
    await api(server, { method: 'POST', path: domainsOf(site.name), token: owner.token, body: { domain } });
    expect(await server.store.updateDomain(domain, record.claim, { status: 'active' })).toBeUndefined();
    expect(server.store.getDomain(domain)).toMatchObject({ status: 'pending' });
  });
});

describe('claims of several sites on one domain', () => {
  type DomainAnswer = { domain: string; status: string; reason?: string; verification: { name: string; value: string }; agent_message?: string };
  const add = (name: string, token: string, domain: string) => api(server, { method: 'POST', path: domainsOf(name), token, body: { domain } });
  const verify = (name: string, token: string, domain: string) => api(server, { method: 'POST', path: `${domainsOf(name)}/${domain}/verify`, token });
  const listed = async (name: string, token: string, domain: string) =>
    ((await api(server, { path: domainsOf(name), token })).json as { domains: DomainAnswer[] }).domains.find((d) => d.domain === domain);
  const twoSites = async () => {
    const victim = await accountSite(server.store, owner, [], { files: { 'index.html': 'victim' } });
    const attacker = await accountWithToken(server.store, 'builder');
    const attackerSite = await accountSite(server.store, attacker, [], { files: { 'index.html': 'attacker' } });
    return { victim, attacker, attackerSite, domain: `www.${unique('claim')}.example.org` };
  };

  it("another account cannot push a site's pending claim out, however often it adds the domain", async () => {
    const { victim, attacker, attackerSite, domain } = await twoSites();
    const mine = await add(victim.name, owner.token, domain);
    expect(mine.status).toBe(201);
    const myValue = (mine.json as DomainAnswer).verification.value;

    for (let round = 0; round < 5; round++) {
      const theirs = await add(attackerSite.name, attacker.token, domain);
      expect([200, 201]).toContain(theirs.status);
      expect((theirs.json as DomainAnswer).verification.value).not.toBe(myValue);
      // The owner's claim is still there, unchanged, and its verify answers.
      expect(await listed(victim.name, owner.token, domain)).toMatchObject({ status: 'pending', verification: { value: myValue } });
      expect((await verify(victim.name, owner.token, domain)).status).toBe(200);
    }
    // Removing and adding again does not push it out either.
    expect((await api(server, { method: 'DELETE', path: `${domainsOf(attackerSite.name)}/${domain}`, token: attacker.token })).status).toBe(200);
    expect((await add(attackerSite.name, attacker.token, domain)).status).toBe(201);

    // The owner publishes its value and verifies: its site gets the domain.
    dns.txt.set(`_plinth-challenge.${domain}`, [myValue]);
    expect((await verify(victim.name, owner.token, domain)).json).toMatchObject({ status: 'active' });
    expect((await visitHost(domain)).text).toBe('victim');
  });

  it('the first claim verified wins; the others are told, and cannot take the domain by verifying or adding again', async () => {
    const { victim, attacker, attackerSite, domain } = await twoSites();
    const mine = (await add(victim.name, owner.token, domain)).json as DomainAnswer;
    const theirs = (await add(attackerSite.name, attacker.token, domain)).json as DomainAnswer;
    // Whoever controls the DNS may publish both values: the first verified gets the domain.
    dns.txt.set(`_plinth-challenge.${domain}`, [mine.verification.value, theirs.verification.value]);
    expect((await verify(victim.name, owner.token, domain)).json).toMatchObject({ status: 'active' });

    const told = await verify(attackerSite.name, attacker.token, domain);
    expect(told.status).toBe(200);
    expect(told.json).toMatchObject({ status: 'taken', reason: expect.stringContaining('Another site verified') });
    expect((told.json as DomainAnswer).agent_message).toContain('in use by another site');
    expect(await listed(attackerSite.name, attacker.token, domain)).toMatchObject({
      status: 'taken',
      reason: expect.stringContaining('Another site verified'),
    });
    const again = await add(attackerSite.name, attacker.token, domain);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: 'taken' });
    // Nothing of the attacker's is served or certified for it; the owner's listing is unchanged.
    expect((await visitHost(domain)).text).toBe('victim');
    expect(server.store.getDomain(domain)).toMatchObject({ siteId: victim.id, status: 'active' });
    expect(await listed(victim.name, owner.token, domain)).toMatchObject({ status: 'active' });
    expect(await listed(victim.name, owner.token, domain)).not.toHaveProperty('reason');

    // A third site, arriving now, is refused outright.
    const late = await accountSite(server.store, attacker);
    expect((await add(late.name, attacker.token, domain)).status).toBe(409);
  });

  it('two claims verified at the same moment: exactly one gets the domain', async () => {
    for (let round = 0; round < 5; round++) {
      const { victim, attacker, attackerSite, domain } = await twoSites();
      const mine = (await add(victim.name, owner.token, domain)).json as DomainAnswer;
      const theirs = (await add(attackerSite.name, attacker.token, domain)).json as DomainAnswer;
      dns.txt.set(`_plinth-challenge.${domain}`, [mine.verification.value, theirs.verification.value]);
      const answers = await Promise.all([verify(victim.name, owner.token, domain), verify(attackerSite.name, attacker.token, domain)]);
      const statuses = answers.map((answer) => (answer.json as DomainAnswer).status).sort();
      expect(statuses).toEqual(['active', 'taken']);
      const claims = [server.store.getDomainClaim(domain, victim.id)!, server.store.getDomainClaim(domain, attackerSite.id)!];
      expect(claims.filter((claim) => claim.status === 'active')).toHaveLength(1);
    }
  });

  it('when the holder lets go, a waiting claim can be verified', async () => {
    const { victim, attacker, attackerSite, domain } = await twoSites();
    const mine = (await add(victim.name, owner.token, domain)).json as DomainAnswer;
    const theirs = (await add(attackerSite.name, attacker.token, domain)).json as DomainAnswer;
    dns.txt.set(`_plinth-challenge.${domain}`, [theirs.verification.value]);
    expect((await verify(attackerSite.name, attacker.token, domain)).json).toMatchObject({ status: 'active' });
    expect(await listed(victim.name, owner.token, domain)).toMatchObject({ status: 'taken' });

    // The DNS is the owner's: they point it at their site and the other site gives the domain up.
    dns.txt.set(`_plinth-challenge.${domain}`, [mine.verification.value]);
    expect((await verify(victim.name, owner.token, domain)).json).toMatchObject({ status: 'taken' });
    expect((await api(server, { method: 'DELETE', path: `${domainsOf(attackerSite.name)}/${domain}`, token: attacker.token })).status).toBe(200);
    expect(await listed(victim.name, owner.token, domain)).toMatchObject({ status: 'pending' });
    expect((await verify(victim.name, owner.token, domain)).json).toMatchObject({ status: 'active' });
    expect((await visitHost(domain)).text).toBe('victim');
  });

  it("a deleted site's active domain is free for the next claim verified", async () => {
    const { victim, attacker, attackerSite, domain } = await twoSites();
    const theirs = (await add(attackerSite.name, attacker.token, domain)).json as DomainAnswer;
    dns.txt.set(`_plinth-challenge.${domain}`, [theirs.verification.value]);
    expect((await verify(attackerSite.name, attacker.token, domain)).json).toMatchObject({ status: 'active' });
    await server.store.setSiteState(attackerSite.name, 'deleted');
    const mine = await add(victim.name, owner.token, domain);
    expect(mine.status).toBe(201);
    dns.txt.set(`_plinth-challenge.${domain}`, [(mine.json as DomainAnswer).verification.value]);
    expect((await verify(victim.name, owner.token, domain)).json).toMatchObject({ status: 'active' });
    expect((await visitHost(domain)).text).toBe('victim');
    // The deleted site's claim is gone: one active claim per domain.
    expect(server.store.getDomainClaim(domain, attackerSite.id)).toBeUndefined();
  });
});

describe('Host header tricks on custom domains', () => {
  const domain = `www.${unique('host')}.example.org`;
  beforeAll(async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': 'tricks' } });
    await activeDomain(site.id, domain);
  });

  it.each([
    ['upper case', () => domain.toUpperCase(), 200],
    ['a trailing dot', () => `${domain}.`, 200],
    ['a port', () => `${domain}:443`, 200],
    ['a subdomain of it', () => `evil.${domain}`, 404],
    ['it as a prefix of another name', () => `${domain}.evil.com`, 404],
    ['a punycode lookalike', () => domain.replace('www.', 'www.xn--80ak6aa92e.'), 404],
    // Sent as its UTF-8 bytes, as a raw client would.
    ['a Cyrillic lookalike, unencoded', () => Buffer.from(domain.replace('example', 'ex\u0430mple'), 'utf8').toString('latin1'), 404],
    ['the apex it does not have', () => domain.slice(4), 404],
    ['two dots at the end', () => `${domain}..`, 404],
  ])('%s', async (_what, host, status) => {
    const answer = await visitHost(host());
    expect(answer.status).toBe(status);
    if (status === 200) expect(answer.text).toBe('tricks');
  });
});

describe('the TLS ask question on public hosts', () => {
  it('is not answered on the public listener, whatever the Host', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': 'public' } });
    const domain = `${unique('pub')}.example.org`;
    await activeDomain(site.id, domain);
    const path = `/?domain=${domain}`;
    for (const host of ['api.localhost', 'app.localhost', 'mcp.localhost', 'localhost', '127.0.0.1', 'unknown.example']) {
      const answer = await request({ port: server.port, host, path });
      expect(answer.text, host).not.toBe('ok\n');
    }
    // On the domain itself, the path is the site's own.
    expect((await request({ port: server.port, host: domain, path })).text).toBe('public');
  });
});

describe('oversized Host headers', () => {
  it('answers 404 for a Host longer than any domain, and keeps serving', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': 'still here' } });
    const domain = `${unique('big')}.example.org`;
    await activeDomain(site.id, domain);
    for (const host of [`${'a'.repeat(10_000)}.example.org`, `${'a'.repeat(300)}.${domain}`, `${'é'.repeat(2000)}.org`]) {
      const answer = await visitHost(Buffer.from(host, 'utf8').toString('latin1'));
      expect([404, 431]).toContain(answer.status);
    }
    expect(server.store.getDomain('x'.repeat(5000))).toBeUndefined();
    expect((await visitHost(domain)).text).toBe('still here');
  });
});
