import { describe, expect, it } from 'vitest';
import { hashToken, type Confirmation, type SiteRecord } from '../../src/store/index.js';
import { createSite, useTestStore } from './helpers.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

const t = useTestStore('approvals');
let counter = 0;

describe('invites', () => {
  it('stores an invite with its creation time from the clock', async () => {
    const { site } = await createSite(t.store, 'invite-site');
    const invite = await t.store.createInvite({
      siteId: site.id,
      email: 'Dora@Example.com ',
      role: 'editor',
      tokenHash: hashToken('inv_1'),
      invitedBy: 'acct_owner',
      expiresAt: t.clock.now + 7 * DAY_MS,
    });
    expect(invite).toEqual({
      siteId: site.id,
      email: 'dora@example.com',
      role: 'editor',
      tokenHash: hashToken('inv_1'),
      invitedBy: 'acct_owner',
      createdAt: t.clock.now,
      expiresAt: t.clock.now + 7 * DAY_MS,
    });
    expect(t.store.listInvites(site.id)).toEqual([invite]);
  });

  it('replaces the pending invite when the same address is invited again', async () => {
    const { site } = await createSite(t.store, 'reinvite-site');
    const base = { siteId: site.id, invitedBy: 'acct_owner', expiresAt: t.clock.now + DAY_MS };
    await t.store.createInvite({ ...base, email: 'eve@example.com', role: 'viewer', tokenHash: hashToken('inv_a') });
    t.clock.now += MINUTE_MS;
    const again = await t.store.createInvite({ ...base, email: 'EVE@example.com', role: 'editor', tokenHash: hashToken('inv_b') });
    await t.store.createInvite({ ...base, email: 'finn@example.com', role: 'viewer', tokenHash: hashToken('inv_c') });

    const invites = t.store.listInvites(site.id);
    expect(invites).toHaveLength(2);
    expect(invites.find((i) => i.email === 'eve@example.com')).toEqual(again);
    expect(again).toMatchObject({ role: 'editor', tokenHash: hashToken('inv_b'), createdAt: t.clock.now });
  });

  it('lists only the invites of that site, and none that have expired', async () => {
    const { site } = await createSite(t.store, 'short-invites');
    await t.store.createInvite({
      siteId: site.id,
      email: 'gus@example.com',
      role: 'viewer',
      tokenHash: 'h1',
      invitedBy: 'a',
      expiresAt: t.clock.now + MINUTE_MS,
    });
    expect(t.store.listInvites(site.id).map((i) => i.email)).toEqual(['gus@example.com']);
    t.clock.now += MINUTE_MS;
    expect(t.store.listInvites(site.id)).toEqual([]);
    expect(t.store.listInvites('site_none')).toEqual([]);
  });
});

describe('confirmations', () => {
  it('stores and reads a confirmation by token hash', async () => {
    const record: Confirmation = {
      kind: 'remove_member',
      siteId: 'site_x',
      accountId: 'acct_y',
      requestedBy: 'acct_z',
      expiresAt: t.clock.now + 5 * MINUTE_MS,
    };
    await t.store.putConfirmation(hashToken('cf_1'), record);
    expect(t.store.getConfirmation(hashToken('cf_1'))).toEqual(record);
    expect(t.store.getConfirmation(hashToken('cf_unknown'))).toBeUndefined();
  });

  it('still returns a confirmation past its expiry, for the caller to judge', async () => {
    const record: Confirmation = { kind: 'remove_member', siteId: 'site_x', accountId: 'acct_y', requestedBy: 'acct_z', expiresAt: t.clock.now };
    await t.store.putConfirmation(hashToken('cf_2'), record);
    t.clock.now += MINUTE_MS;
    expect(t.store.getConfirmation(hashToken('cf_2'))).toEqual(record);
  });
});

/** A live site and a pending deletion approval for it. */
async function siteAwaitingDeletion(name = `doomed-site-${++counter}`): Promise<{ site: SiteRecord; tokenHash: string }> {
  const { site } = await createSite(t.store, name, { accountId: 'acct_owner' });
  const tokenHash = hashToken(`ap_${name}`);
  await t.store.putConfirmation(tokenHash, {
    kind: 'delete_site',
    siteId: site.id,
    requestedBy: 'acct_owner',
    expiresAt: t.clock.now + DAY_MS,
    status: 'pending',
  });
  return { site, tokenHash };
}

describe('approveDeletion', () => {
  it('deletes the site and records the approval when the name is typed', async () => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    const heard: string[] = [];
    const stop = t.store.onSiteChanged(({ siteId }) => heard.push(siteId));
    t.clock.now += MINUTE_MS;

    const outcome = await t.store.approveDeletion(tokenHash, site.name);
    stop();

    const approval = {
      kind: 'delete_site',
      siteId: site.id,
      requestedBy: 'acct_owner',
      expiresAt: t.clock.now - MINUTE_MS + DAY_MS,
      status: 'approved',
      decidedAt: t.clock.now,
    };
    expect(outcome).toEqual({ ok: true, approval });
    expect(t.store.getConfirmation(tokenHash)).toEqual(approval);
    expect(t.store.getSiteById(site.id)).toMatchObject({ state: 'deleted', stateChangedAt: t.clock.now });
    expect(t.store.listSitesOf('acct_owner').sites.map((s) => s.site.id)).not.toContain(site.id);
    expect(heard).toEqual([site.id]);
  });

  it.each([
    ['the name', (name: string) => name],
    ['the name in capitals', (name: string) => name.toUpperCase()],
    ['the name with spaces around it', (name: string) => `  ${name} `],
    ['the host name', (name: string) => `${name}.plinth.example`],
    ['the https address with a trailing slash', (name: string) => `https://${name}.plinth.example/`],
    ['the http address', (name: string) => `HTTP://${name}.Plinth.Example`],
    ['the host with a port', (name: string) => `${name}.localhost:8080`],
  ])('accepts %s', async (_, typed) => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    expect((await t.store.approveDeletion(tokenHash, typed(site.name))).ok).toBe(true);
    expect(t.store.getSiteById(site.id)?.state).toBe('deleted');
  });

  it.each([
    ['an empty string', () => ''],
    ['another site', () => 'other-site'],
    ['the name with a suffix', (name: string) => `${name}x`],
    ['the name with a prefix', (name: string) => `x${name}`],
    ['another site on the same domain', () => 'other-site.plinth.example'],
    ['the address with a path', (name: string) => `https://${name}.plinth.example/about`],
    ['another scheme', (name: string) => `ftp://${name}.plinth.example`],
    ['the name and a dot only', (name: string) => `${name}.`],
    ['the name inside a sentence', (name: string) => `delete ${name}`],
  ])('refuses %s and changes nothing', async (_, typed) => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    expect(await t.store.approveDeletion(tokenHash, typed(site.name))).toEqual({ ok: false, reason: 'wrong_address' });
    expect(t.store.getSiteById(site.id)?.state).toBe('active');
    expect(t.store.getConfirmation(tokenHash)).toMatchObject({ status: 'pending' });
  });

  it('checks the current name: a former name does not delete', async () => {
    const { site, tokenHash } = await siteAwaitingDeletion('before-rename');
    await t.store.renameSite('before-rename', 'after-rename');
    expect(await t.store.approveDeletion(tokenHash, 'before-rename')).toEqual({ ok: false, reason: 'wrong_address' });
    expect((await t.store.approveDeletion(tokenHash, 'after-rename')).ok).toBe(true);
    expect(t.store.getSiteById(site.id)?.state).toBe('deleted');
  });

  it('refuses an expired approval, from its expiry on', async () => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    t.clock.now += DAY_MS;
    expect(await t.store.approveDeletion(tokenHash, site.name)).toEqual({ ok: false, reason: 'expired' });
    expect(t.store.getSiteById(site.id)?.state).toBe('active');
    expect(t.store.getConfirmation(tokenHash)).toMatchObject({ status: 'pending' });
  });

  it('decides once: a second approval is already_decided, even after the link lapses', async () => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    expect((await t.store.approveDeletion(tokenHash, site.name)).ok).toBe(true);
    const decided = t.store.getConfirmation(tokenHash);
    expect(await t.store.approveDeletion(tokenHash, site.name)).toEqual({ ok: false, reason: 'already_decided' });
    t.clock.now += 2 * DAY_MS;
    expect(await t.store.approveDeletion(tokenHash, site.name)).toEqual({ ok: false, reason: 'already_decided' });
    expect(t.store.getConfirmation(tokenHash)).toEqual(decided);
  });

  it('lets only one of two simultaneous approvals win', async () => {
    const { site, tokenHash } = await siteAwaitingDeletion();
    const outcomes = await Promise.all([t.store.approveDeletion(tokenHash, site.name), t.store.approveDeletion(tokenHash, site.name)]);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.reason)).sort()).toEqual(['already_decided', 'ok']);
  });

  it('answers not_found for an unknown token and for a member-removal token', async () => {
    expect(await t.store.approveDeletion(hashToken('ap_unknown'), 'anything')).toEqual({ ok: false, reason: 'not_found' });
    await t.store.putConfirmation(hashToken('cf_member'), {
      kind: 'remove_member',
      siteId: 'site_x',
      accountId: 'a',
      requestedBy: 'b',
      expiresAt: t.clock.now + DAY_MS,
    });
    expect(await t.store.approveDeletion(hashToken('cf_member'), 'anything')).toEqual({ ok: false, reason: 'not_found' });
  });
});
