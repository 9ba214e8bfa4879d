import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { countMailTo } from '../app/browser.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * Invites send e-mail to an address the inviter chooses, and inviting again sends it again: without
 * caps, any account (a Free one, with a site of its own) could have Plinth mail one victim
 * hundreds of times a minute, or mail thousands of strangers, as sign-in e-mails cannot.
 */

let counter = 0;
const address = (who: string): string => `${who}-${Date.now().toString(36)}${(++counter).toString(36)}@example.com`;

const invite = (server: { port: number }, name: string, token: string, email: string) =>
  api(server as never, { method: 'POST', path: `/v1/sites/${name}/members`, token, body: { email, role: 'viewer' } });

describe('invite e-mails are capped', () => {
  const server = useTestServer({ PLINTH_INVITE_EMAILS_PER_ADDRESS: '2', PLINTH_INVITE_EMAILS_PER_ACCOUNT: '4' });
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    owner = await accountWithToken(server.store, 'free');
    other = await accountWithToken(server.store, 'free');
  });

  it('per invited address, whoever invites and to whichever site', async () => {
    const victim = address('victim');
    const site = await accountSite(server.store, owner);
    const otherSite = await accountSite(server.store, other);
    const first = await invite(server, site.name, owner.token, victim);
    const again = await invite(server, site.name, owner.token, victim);
    expect([first.status, again.status]).toEqual([201, 201]);
    const flooded = await invite(server, site.name, owner.token, victim);
    expect(flooded.status).toBe(429);
    expect(flooded.json.error.code).toBe('limit');
    expect(Number(flooded.headers['retry-after'])).toBeGreaterThan(0);
    // Another account, another site: the same address is not mailed again within the hour.
    expect((await invite(server, otherSite.name, other.token, victim)).status).toBe(429);
    expect(countMailTo(server, victim)).toBe(2);
    // The refused invite changed nothing: the one sent before still stands.
    const members = await api(server, { path: `/v1/sites/${site.name}/members`, token: owner.token });
    expect(members.json.invites.map((entry: { email: string }) => entry.email)).toEqual([victim]);
  });

  it('per inviting account, across its sites', async () => {
    const inviter = await accountWithToken(server.store, 'builder');
    const one = await accountSite(server.store, inviter);
    const two = await accountSite(server.store, inviter);
    const statuses: number[] = [];
    const strangers = [1, 2, 3, 4, 5].map(() => address('stranger'));
    for (const [i, stranger] of strangers.entries()) statuses.push((await invite(server, i % 2 === 0 ? one.name : two.name, inviter.token, stranger)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429]);
    expect(countMailTo(server, strangers[4]!)).toBe(0);
  });

  it('counts only invites that would be sent: a refused one (not an owner, bad role) costs nothing', async () => {
    const viewer = await accountWithToken(server.store, 'free');
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']]);
    const target = address('target');
    for (let i = 0; i < 3; i++) expect((await invite(server, site.name, viewer.token, target)).status).toBe(403);
    const badRole = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/members`, token: owner.token, body: { email: target, role: 'owner' } });
    expect(badRole.status).toBe(400);
    expect((await invite(server, site.name, owner.token, target)).status).toBe(201);
  });
});

describe('addresses with control characters', () => {
  const server = useTestServer();

  // An invite is stored before its e-mail goes out and is listed to every member, and an address
  // becomes an account's, shown as the author of its revisions: a control character in it reaches
  // terminals (ESC sequences), logs (NUL, line breaks) and mail headers.
  it.each([
    ['ESC (a terminal reset)', 'x\u001bcy@example.com'],
    ['NUL', 'x\u0000y@example.com'],
    ['DEL', 'x\u007fy@example.com'],
    ['a C1 control (CSI)', 'x\u009b2Jy@example.com'],
    ['a unit separator', 'x\u001fy@example.com'],
  ])('refuses an invite to an address with %s, and neither stores nor mails it', async (_case, email) => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const answer = await invite(server, site.name, owner.token, email);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: 'bad_request', details: { field: 'email' } });
    expect(server.store.listInvites(site.id)).toEqual([]);
  });
});

describe('invite e-mail caps at 0', () => {
  const server = useTestServer({ PLINTH_INVITE_EMAILS_PER_ADDRESS: '0', PLINTH_INVITE_EMAILS_PER_ACCOUNT: '0' });

  it('are off', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner);
    const someone = address('someone');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await invite(server, site.name, owner.token, someone)).status);
    expect(statuses.every((status) => status === 201)).toBe(true);
    expect(countMailTo(server, someone)).toBe(12);
  });
});
