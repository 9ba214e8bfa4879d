import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTlsAsk, type TlsAsk } from '../../src/runtime/tls-ask.js';
import { createDomainServing } from '../../src/serve/index.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, unique, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';

/**
 * The TLS terminator's question under attack: each yes may become a certificate a CA issues (and
 * counts against the site domain's weekly limit), so anyone who can make the terminator ask for
 * names must get a yes only for names that serve a page now. A preview address is one per
 * revision in reach, not one per number up to 999,999,999; no spelling of a name is a second name.
 */

const DAY = 24 * 3600_000;
let clock = Date.now();
let ask: TlsAsk;
let owner: TestAccount;

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  const serving = createDomainServing({ store: server.store, hosts: server.config.hosts, scheme: 'https', now: () => clock });
  ask = await startTlsAsk({ serving, host: '127.0.0.1', port: 0, log: createLogger({ level: 'silent' }) });
});

afterAll(async () => {
  await ask?.close();
});

const site = (label: string): string => `${label}.sites.localhost`;
/** The ask's answer for `domain`, sent exactly as given (percent-encoded in the query). */
const asks = (domain: string): Promise<number> =>
  request({ port: ask.port, host: '127.0.0.1', path: `/?domain=${encodeURIComponent(domain)}` }).then((res) => res.status);
const visit = (host: string) => request({ port: server.port, host, path: '/' });

/** A Builder site with revisions 1, 2 and 3, and a Free one whose revision 1 is past its 7-day reach. */
async function sitesWithHistory() {
  const builder = await accountSite(server.store, owner, [], { files: { 'index.html': 'one' } });
  await commitFiles(server.store, builder.name, { 'index.html': 'two' });
  await commitFiles(server.store, builder.name, { 'index.html': 'three' });
  const freeOwner = await accountWithToken(server.store, 'free');
  const free = await accountSite(server.store, freeOwner, [], { files: { 'index.html': 'old' } });
  clock += 8 * DAY;
  await commitFiles(server.store, free.name, { 'index.html': 'new' });
  return { builder: builder.name, free: free.name };
}

describe('preview addresses', () => {
  let names: { builder: string; free: string };
  beforeAll(async () => {
    names = await sitesWithHistory();
  });

  it('says yes for each revision in reach, and for nothing else of any number', async () => {
    const { builder } = names;
    const approved: number[] = [];
    for (let number = 1; number <= 60; number++) if ((await asks(site(`${number}--${builder}`))) === 200) approved.push(number);
    expect(approved).toEqual([1, 2, 3]);
    expect(await asks(site(builder))).toBe(200);
  });

  it.each<[string, (n: { builder: string; free: string }) => string]>([
    ['the next revision, not made yet', (n) => `4--${n.builder}`],
    ['the highest number a label may carry', (n) => `999999999--${n.builder}`],
    ['a nine-digit number', (n) => `123456789--${n.builder}`],
    ['a ten-digit number', (n) => `1000000000--${n.builder}`],
    ['a number past 2^53', (n) => `9007199254740993--${n.builder}`],
    ['leading zeros', (n) => `007--${n.builder}`],
    ['one leading zero', (n) => `01--${n.builder}`],
    ['revision zero', (n) => `0--${n.builder}`],
    ['zeros only', (n) => `000--${n.builder}`],
    ['a sign', (n) => `+1--${n.builder}`],
    ['a negative number', (n) => `-1--${n.builder}`],
    ['an exponent', (n) => `1e0--${n.builder}`],
    ['hexadecimal', (n) => `0x1--${n.builder}`],
    ['non-ASCII digits', (n) => `\u0661--${n.builder}`],
    ['full-width digits', (n) => `\uff11--${n.builder}`],
    ['a preview of a preview', (n) => `1--1--${n.builder}`],
    ['three dashes', (n) => `1---${n.builder}`],
    ['a revision past the plan’s history reach', (n) => `1--${n.free}`],
    ['an unknown site', (n) => `1--unknown-${n.builder}`],
  ])('says no to %s', async (_what, label) => {
    expect(await asks(site(label(names)))).toBe(404);
  });

  it.each<[string, (n: { builder: string }) => string]>([
    ['upper case', (n) => site(`2--${n.builder}`).toUpperCase()],
    ['an upper-case site label', (n) => site(`2--${n.builder.toUpperCase()}`)],
    ['an upper-case site domain', (n) => `2--${n.builder}.SITES.localhost`],
    ['a trailing dot', (n) => `${site(`2--${n.builder}`)}.`],
    ['two trailing dots', (n) => `${site(`2--${n.builder}`)}..`],
    ['a port', (n) => `${site(`2--${n.builder}`)}:443`],
    ['a leading space', (n) => ` ${site(`2--${n.builder}`)}`],
    ['a trailing space', (n) => `${site(`2--${n.builder}`)} `],
    ['a trailing newline', (n) => `${site(`2--${n.builder}`)}\n`],
    ['a trailing NUL', (n) => `${site(`2--${n.builder}`)}\u0000`],
    ['a scheme', (n) => `https://${site(`2--${n.builder}`)}`],
    ['a path', (n) => `${site(`2--${n.builder}`)}/`],
    ['the site’s own address in upper case', (n) => site(n.builder).toUpperCase()],
    ['the site’s own address with a trailing dot', (n) => `${site(n.builder)}.`],
    ['a name under a preview', (n) => `www.${site(`2--${n.builder}`)}`],
  ])('says no to another spelling of a served name: %s', async (_what, spelled) => {
    expect(await asks(spelled(names))).toBe(404);
  });

  it('says yes exactly where serving shows a page', async () => {
    const { builder, free } = names;
    for (const label of [builder, `1--${builder}`, `3--${builder}`, `4--${builder}`, `999999999--${builder}`, free, `1--${free}`, `2--${free}`]) {
      const served = (await visit(site(label))).status === 200;
      expect(await asks(site(label)), label).toBe(served ? 200 : 404);
    }
  });

  it('says no once a revision leaves the store, or leaves the reach as time goes by', async () => {
    const freeOwner = await accountWithToken(server.store, 'free');
    const made = await accountSite(server.store, freeOwner, [], { files: { 'index.html': 'first' } });
    clock += 2 * DAY;
    await commitFiles(server.store, made.name, { 'index.html': 'second' });
    await commitFiles(server.store, made.name, { 'index.html': 'third' });
    expect(await asks(site(`1--${made.name}`))).toBe(200);
    // Six days on, revision 1 is 8 days old: past a Free site's 7 days.
    clock += 6 * DAY;
    expect(await asks(site(`1--${made.name}`))).toBe(404);
    expect(await asks(site(`2--${made.name}`))).toBe(200);
    // Pruned from the store (as the sweeper does past the reach, or a deletion would).
    expect(await server.store.pruneRevisions(made.id, clock + 1)).toBe(2);
    expect(await asks(site(`2--${made.name}`))).toBe(404);
    expect(await asks(site(`3--${made.name}`))).toBe(200);
  });

  it('says no to a revision its owner deleted, at once', async () => {
    const made = await accountSite(server.store, owner, [], { files: { 'index.html': 'mistake' } });
    await commitFiles(server.store, made.name, { 'index.html': 'fixed' });
    expect(await asks(site(`1--${made.name}`))).toBe(200);
    const first = server.store.getRevisionByNumber(made.id, 1)!;
    const deleted = await api(server, { method: 'DELETE', path: `/v1/sites/${made.name}/revisions/${first.id}`, token: owner.token });
    expect(deleted.status).toBe(200);
    expect((await visit(site(`1--${made.name}`))).status).toBe(410);
    expect(await asks(site(`1--${made.name}`))).toBe(404);
    expect(await asks(site(`2--${made.name}`))).toBe(200);
  });

  it('says no to a preview under a former name (its address only redirects to the live site)', async () => {
    const renamed = await accountSite(server.store, owner, [], { files: { 'index.html': 'renamed' } });
    await commitFiles(server.store, renamed.name, { 'index.html': 'renamed two' });
    const newName = unique('moved-');
    expect(await server.store.renameSite(renamed.name, newName)).toMatchObject({ ok: true });
    expect(await asks(site(`1--${newName}`))).toBe(200);
    expect(await asks(site(`1--${renamed.name}`))).toBe(404);
    // The former name itself still redirects, over HTTPS too.
    expect(await asks(site(renamed.name))).toBe(200);
  });

  it('an anonymous site reaches only its current revision', async () => {
    const anonymous = await anonymousSite(server.store, clock + DAY);
    await commitFiles(server.store, anonymous.name, { 'index.html': 'second' });
    expect(await asks(site(anonymous.name))).toBe(200);
    expect(await asks(site(`2--${anonymous.name}`))).toBe(200);
    expect(await asks(site(`1--${anonymous.name}`))).toBe(404);
  });
});

describe('sites that serve no page', () => {
  it.each<[string, () => Promise<string>]>([
    [
      'deleted',
      async () => {
        const made = await accountSite(server.store, owner);
        await server.store.setSiteState(made.name, 'deleted');
        return made.name;
      },
    ],
    [
      'taken down',
      async () => {
        const made = await accountSite(server.store, owner);
        await server.store.setSiteState(made.name, 'taken_down');
        return made.name;
      },
    ],
    ['expired', async () => (await anonymousSite(server.store, clock - 1)).name],
  ])('says no for a %s site, at its address and every preview, and for its custom domain', async (_state, make) => {
    const name = await make();
    const record = server.store.getSite(name)!;
    const domain = `www.${unique('gone')}.example.org`;
    const added = await server.store.addDomain({ domain, siteId: record.id, token: 'plinth-verify=x', maxPerSite: 10 });
    if (added.ok) await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: clock });
    expect(await asks(site(name))).toBe(404);
    expect(await asks(site(`1--${name}`))).toBe(404);
    expect(await asks(domain)).toBe(404);
  });
});

describe('custom domains', () => {
  it('says yes for an active domain as stored, and no to any other spelling of it', async () => {
    const made = await accountSite(server.store, owner);
    const domain = `www.${unique('ask')}.example.org`;
    const added = await server.store.addDomain({ domain, siteId: made.id, token: 'plinth-verify=x', maxPerSite: 10 });
    if (!added.ok) throw new Error(added.reason);
    expect(await asks(domain)).toBe(404);
    await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: clock });
    expect(await asks(domain)).toBe(200);
    for (const spelled of [domain.toUpperCase(), `${domain}.`, `${domain}:443`, ` ${domain}`, `${domain}\t`, `x.${domain}`, domain.slice(4)]) {
      expect(await asks(spelled), JSON.stringify(spelled)).toBe(404);
    }
  });
});
