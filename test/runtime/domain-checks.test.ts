import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { createTxtLookup, type TxtAnswer } from '../../src/outbound/index.js';
import { createDomainChecker } from '../../src/sites/index.js';
import { checkOutcome } from '../../src/sites/domain-checks.js';
import { openStore, type DomainRecord, type Store } from '../../src/store/index.js';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { publishSite, tempDir } from '../helpers/sites.js';

/** The periodic TXT checks of custom domains, with a moving clock and a loopback DNS server. */

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const log = createLogger({ level: 'silent' });

const record = (status: DomainRecord['status'], extra: Partial<DomainRecord> = {}): DomainRecord => ({
  domain: 'www.example.org',
  siteId: 'site_1',
  claim: 'dom_1',
  status,
  token: 'plinth-verify=abc',
  primary: false,
  createdAt: 0,
  ...extra,
});
const found = (...values: string[]): TxtAnswer => ({ kind: 'found', values });
const none: TxtAnswer = { kind: 'none' };
const broken: TxtAnswer = { kind: 'error', code: 'ETIMEOUT' };
const GRACE = 3 * DAY;

describe('the outcome of one check', () => {
  it.each([
    ['a pending domain whose record is there becomes active', record('pending'), found('x', 'plinth-verify=abc'), HOUR, 'active'],
    ['a pending domain without the record stays pending within the week', record('pending'), none, 6 * DAY, 'pending'],
    ['a pending domain without the record fails after a week', record('pending'), none, 7 * DAY, 'failed'],
    ['a pending domain with another value stays pending', record('pending'), found('plinth-verify=other'), HOUR, 'pending'],
    ['an active domain whose record went stays active within the grace period', record('active'), none, 10 * DAY, 'active'],
    ['an active domain missing its record past the grace period is suspended', record('active', { failingSince: 5 * DAY }), none, 8 * DAY, 'suspended'],
    ['a failing DNS server never suspends an active domain', record('active', { failingSince: 0 }), broken, 30 * DAY, undefined],
    ['a suspended domain whose record is back is active again', record('suspended', { failingSince: 0 }), found('plinth-verify=abc'), 30 * DAY, 'active'],
    ['a failed domain stays failed without the record', record('failed'), none, 30 * DAY, undefined],
  ])('%s', (_what, before, answer, at, status) => {
    const patch = checkOutcome(before, answer, at, GRACE);
    expect(patch.status).toBe(status);
    expect(patch.checkedAt).toBe(at);
    if (answer.kind === 'found' && answer.values.includes(before.token))
      expect(patch).toMatchObject({ reason: undefined, failingSince: undefined, verifiedAt: at });
    else expect(patch.reason).toEqual(expect.any(String));
  });
});

describe('periodic checks in the sweeper', () => {
  let dns: TestDns;
  let store: Store;
  let clock = Date.now();
  beforeAll(async () => {
    dns = await startTestDns();
    store = openStore({ dir: tempDir(), now: () => clock });
  });
  afterAll(async () => {
    await store.close();
    await dns.close();
  });

  it('activates pending domains when the record appears, fails them after a week, suspends active ones after the grace period', async () => {
    const config = loadConfig({ PLINTH_DNS_SERVERS: dns.address, PLINTH_DOMAIN_GRACE_S: String(2 * 24 * 3600) });
    const checkDomains = createDomainChecker({ store, config, log, now: () => clock, lookup: createTxtLookup(config.domains.dnsServers) });
    const run = () => sweep({ store, log, blobGraceMs: HOUR, now: () => clock, checkDomains });
    await publishSite(store, 'domain-site', { 'index.html': 'hi' });
    const siteId = store.getSite('domain-site')!.id;
    for (const domain of ['soon.example.org', 'never.example.org']) {
      expect(await store.addDomain({ domain, siteId, token: `plinth-verify=${domain}`, maxPerSite: 5 })).toMatchObject({ ok: true });
    }
    dns.txt.set('_plinth-challenge.soon.example.org', ['plinth-verify=soon.example.org']);

    expect((await run()).domains).toEqual({ checked: 2, activated: 1, failed: 0, suspended: 0 });
    expect(store.getDomain('soon.example.org')).toMatchObject({ status: 'active' });
    expect(store.getDomain('never.example.org')).toMatchObject({
      status: 'pending',
      reason: 'No TXT record was found at _plinth-challenge.never.example.org.',
    });

    // An hour later only the pending one is due; the active one waits a day.
    clock += HOUR;
    expect((await run()).domains).toMatchObject({ checked: 1 });

    dns.txt.delete('_plinth-challenge.soon.example.org');
    clock += DAY;
    expect((await run()).domains).toMatchObject({ checked: 2, suspended: 0 });
    expect(store.getDomain('soon.example.org')).toMatchObject({ status: 'active', failingSince: clock });

    clock += 2 * DAY;
    expect((await run()).domains).toMatchObject({ suspended: 1 });
    expect(store.getDomain('soon.example.org')).toMatchObject({ status: 'suspended' });

    clock += 4 * DAY;
    expect((await run()).domains).toMatchObject({ failed: 1 });
    expect(store.getDomain('never.example.org')).toMatchObject({ status: 'failed' });

    // Failed domains are not looked up again by themselves; a suspended one whose record is back recovers.
    dns.txt.set('_plinth-challenge.soon.example.org', ['plinth-verify=soon.example.org']);
    clock += DAY;
    expect((await run()).domains).toEqual({ checked: 1, activated: 1, failed: 0, suspended: 0 });
    expect(store.getDomain('soon.example.org')).toMatchObject({ status: 'active' });
    expect(store.getDomain('soon.example.org')).not.toHaveProperty('failingSince');
  });

  it("does not look up a claim while another site's claim holds its domain, and does again once it lets go", async () => {
    const config = loadConfig({ PLINTH_DNS_SERVERS: dns.address });
    const checkDomains = createDomainChecker({ store, config, log, now: () => clock, lookup: createTxtLookup(config.domains.dnsServers) });
    await publishSite(store, 'holder-site', { 'index.html': 'holder' });
    await publishSite(store, 'waiting-site', { 'index.html': 'waiting' });
    const [holder, waiting] = [store.getSite('holder-site')!.id, store.getSite('waiting-site')!.id];
    const domain = 'held.example.org';
    const held = await store.addDomain({ domain, siteId: holder, token: 'plinth-verify=holder', maxPerSite: 5 });
    const waits = await store.addDomain({ domain, siteId: waiting, token: 'plinth-verify=waiting', maxPerSite: 5 });
    if (!held.ok || !waits.ok) throw new Error('not added');
    await store.updateDomain(domain, held.record.claim, { status: 'active', verifiedAt: clock, checkedAt: clock });
    dns.txt.set('_plinth-challenge.held.example.org', ['plinth-verify=holder', 'plinth-verify=waiting']);

    expect(await checkDomains()).toEqual({ checked: 0, activated: 0, failed: 0, suspended: 0 });
    expect(store.getDomainClaim(domain, waiting)).toMatchObject({ status: 'pending' });
    await store.removeDomain(holder, domain);
    expect(await checkDomains()).toEqual({ checked: 1, activated: 1, failed: 0, suspended: 0 });
    expect(store.getDomainHolder(domain)).toMatchObject({ siteId: waiting });
  });
});
