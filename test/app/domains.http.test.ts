import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useAppServer, useTestDns } from '../helpers/fixtures.js';
import { AppClient } from './http-client.js';

/** The site page's custom domains: the records to create, checking them, primary, removal, refusals. */

let owner: TestAccount;
let browser: AppClient;

const dns = useTestDns();
const server = useAppServer(() => ({ PLINTH_DNS_SERVERS: dns.address }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  browser = new AppClient(server);
  await browser.signIn(owner.account.email);
});

describe('custom domains in the app', () => {
  it('adds a domain, shows the records to create, checks them, marks it primary and removes it', async () => {
    const site = await accountSite(server.store, owner);
    const path = `/sites/${site.name}`;
    expect((await browser.get(path)).text).toContain('is served only at its own address');

    const added = await browser.post(`${path}/domains`, { domain: 'www.app-example.org', csrf: await browser.formToken(path) });
    expect(added.status).toBe(303);
    const shown = (await browser.get(path)).text;
    expect(shown).toContain('www.app-example.org was added');
    expect(shown).toContain('Waiting for DNS records');
    const value = /<code>(plinth-verify=[^<]+)<\/code>/.exec(shown)?.[1];
    expect(value).toBeDefined();
    expect(shown).toContain('<code>_plinth-challenge.www.app-example.org</code>');
    expect(shown).toContain(`<code>${site.name}.sites.localhost</code>`);

    dns.txt.set('_plinth-challenge.www.app-example.org', [value!]);
    await browser.post(`${path}/domains/verify`, { domain: 'www.app-example.org', csrf: await browser.formToken(path) });
    const active = (await browser.get(path)).text;
    expect(active).toContain('www.app-example.org is active.');
    expect(active).toContain('Make www.app-example.org primary');

    await browser.post(`${path}/domains/primary`, { domain: 'www.app-example.org', primary: '1', csrf: await browser.formToken(path) });
    expect((await browser.get(path)).text).toContain('Stop using www.app-example.org as primary');

    await browser.post(`${path}/domains/remove`, { domain: 'www.app-example.org', csrf: await browser.formToken(path) });
    const removed = (await browser.get(path)).text;
    expect(removed).toContain('www.app-example.org was removed');
    expect(removed).toContain('is served only at its own address');
  });

  it('tells the owner when another site verified the domain first', async () => {
    const site = await accountSite(server.store, owner);
    const path = `/sites/${site.name}`;
    await browser.post(`${path}/domains`, { domain: 'www.app-taken.org', csrf: await browser.formToken(path) });
    const other = await accountWithToken(server.store, 'builder');
    const otherSite = await accountSite(server.store, other);
    const added = await server.store.addDomain({ domain: 'www.app-taken.org', siteId: otherSite.id, token: 'plinth-verify=other', maxPerSite: 5 });
    if (!added.ok) throw new Error(added.reason);
    await server.store.updateDomain('www.app-taken.org', added.record.claim, { status: 'active', verifiedAt: Date.now() });

    const shown = (await browser.get(path)).text;
    expect(shown).toContain('In use by another site');
    expect(shown).toContain('Another site verified www.app-taken.org first');
    await browser.post(`${path}/domains/verify`, { domain: 'www.app-taken.org', csrf: await browser.formToken(path) });
    expect((await browser.get(path)).text).toContain('www.app-taken.org is not active yet: Another site verified');
  });

  it('shows a refused domain next to the field and in the summary', async () => {
    const site = await accountSite(server.store, owner);
    const path = `/sites/${site.name}`;
    const refused = await browser.post(`${path}/domains`, { domain: 'api.localhost', csrf: await browser.formToken(path) });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('api.localhost belongs to this service');
    expect(refused.text).toContain('href="#domain"');
    expect(refused.text).toMatch(/id="domain"[^>]*aria-invalid="true"/);
  });

  it('lets members see domains but not change them', async () => {
    const viewer = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']]);
    await server.store.addDomain({ domain: 'viewer-example.org', siteId: site.id, token: 't', maxPerSite: 5 });
    const client = new AppClient(server);
    await client.signIn(viewer.account.email);
    const seen = (await client.get(`/sites/${site.name}`)).text;
    expect(seen).toContain('viewer-example.org');
    expect(seen).not.toContain('Add domain');
    expect(seen).not.toContain('Remove viewer-example.org');
    const tried = await client.post(`/sites/${site.name}/domains/remove`, {
      domain: 'viewer-example.org',
      csrf: await client.formToken(`/sites/${site.name}`),
    });
    expect(tried.status).toBe(403);
    expect(server.store.getDomain('viewer-example.org')).toBeDefined();
  });
});
