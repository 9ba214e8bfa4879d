import { describe, expect, it } from 'vitest';
import { hashToken, type IssuedTokens } from '../../src/store/index.js';
import { createAccount, useTestStore } from './helpers.js';

/** OAuth records: single-use codes, grants, rotation with replay detection, revocation, pruning. */

const HOUR_MS = 3600_000;
const t = useTestStore('oauth');
let counter = 0;

const next = (prefix: string): string => `${prefix}${++counter}`;

function tokens(): IssuedTokens & { access: string; refresh: string } {
  const access = next('pla_');
  const refresh = next('plr_');
  return {
    access,
    refresh,
    accessHash: hashToken(access),
    accessExpiresAt: t.clock.now + HOUR_MS,
    refreshHash: hashToken(refresh),
    refreshExpiresAt: t.clock.now + 90 * 24 * HOUR_MS,
  };
}

async function codeFor(accountId: string, clientId = 'mcp_client'): Promise<string> {
  const code = next('plc_');
  await t.store.createAuthorizationCode(hashToken(code), {
    clientId,
    accountId,
    redirectUri: 'http://127.0.0.1/cb',
    codeChallenge: 'x'.repeat(43),
    resource: 'http://mcp.localhost/mcp',
    scope: 'sites',
    expiresAt: t.clock.now + 60_000,
  });
  return code;
}

const grantFields = () => ({ id: next('grant_'), clientName: 'App', redirectHost: '127.0.0.1' });

describe('authorization codes', () => {
  it('exchanges a code once for a grant and its tokens', async () => {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const code = await codeFor(account.id);
    const issued = tokens();
    const first = await t.store.redeemAuthorizationCode(hashToken(code), () => true, grantFields(), issued);
    expect(first).toMatchObject({
      ok: true,
      grant: { accountId: account.id, clientId: 'mcp_client', resource: 'http://mcp.localhost/mcp', refreshHash: issued.refreshHash },
    });
    expect(t.store.findToken(issued.accessHash)).toMatchObject({ kind: 'oauth_access', expiresAt: issued.accessExpiresAt });
    expect(t.store.listOAuthGrants(account.id).map((grant) => grant.id)).toEqual([first.ok && first.grant.id]);

    // Used again: refused, and what it granted is revoked.
    expect(await t.store.redeemAuthorizationCode(hashToken(code), () => true, grantFields(), tokens())).toEqual({ ok: false, reason: 'reused' });
    expect(t.store.listOAuthGrants(account.id)).toEqual([]);
    expect(t.store.getOAuthGrant(first.ok ? first.grant.id : '')).toMatchObject({ revokedReason: 'code_reused' });
  });

  it('burns a code whose check fails, and refuses expired and unknown codes', async () => {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const code = await codeFor(account.id);
    expect(await t.store.redeemAuthorizationCode(hashToken(code), () => false, grantFields(), tokens())).toEqual({ ok: false, reason: 'mismatch' });
    expect(await t.store.redeemAuthorizationCode(hashToken(code), () => true, grantFields(), tokens())).toEqual({ ok: false, reason: 'reused' });
    const late = await codeFor(account.id);
    t.clock.now += 61_000;
    expect(await t.store.redeemAuthorizationCode(hashToken(late), () => true, grantFields(), tokens())).toEqual({ ok: false, reason: 'expired' });
    expect(await t.store.redeemAuthorizationCode(hashToken('plc_unknown'), () => true, grantFields(), tokens())).toEqual({ ok: false, reason: 'not_found' });
  });
});

describe('refresh tokens', () => {
  async function grant() {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const issued = tokens();
    const outcome = await t.store.redeemAuthorizationCode(hashToken(await codeFor(account.id)), () => true, grantFields(), issued);
    if (!outcome.ok) throw new Error('no grant');
    return { account, grant: outcome.grant, issued };
  }

  it('rotates: the current refresh token gives new tokens; the old one then revokes the grant', async () => {
    const { grant: made, issued } = await grant();
    const second = tokens();
    expect(await t.store.rotateRefreshToken(issued.refreshHash, () => true, second)).toMatchObject({ ok: true, grant: { refreshHash: second.refreshHash } });
    expect(await t.store.rotateRefreshToken(issued.refreshHash, () => true, tokens())).toEqual({ ok: false, reason: 'reused' });
    expect(t.store.getOAuthGrant(made.id)).toMatchObject({ revokedReason: 'refresh_reused' });
    expect(await t.store.rotateRefreshToken(second.refreshHash, () => true, tokens())).toMatchObject({ ok: false });
  });

  it('refuses without rotating when the check fails, and after expiry', async () => {
    const { issued } = await grant();
    expect(await t.store.rotateRefreshToken(issued.refreshHash, () => false, tokens())).toEqual({ ok: false, reason: 'mismatch' });
    t.clock.now += 91 * 24 * HOUR_MS;
    expect(await t.store.rotateRefreshToken(issued.refreshHash, () => true, tokens())).toEqual({ ok: false, reason: 'expired' });
    expect(await t.store.rotateRefreshToken(hashToken('plr_unknown'), () => true, tokens())).toEqual({ ok: false, reason: 'not_found' });
  });

  it('revokes a grant only for its own account', async () => {
    const { account, grant: made, issued } = await grant();
    const other = await createAccount(t.store, `${next('o')}@example.com`);
    expect(await t.store.revokeOAuthGrant(made.id, 'disconnected', other.id)).toBe(false);
    expect(await t.store.revokeOAuthGrant(made.id, 'disconnected', account.id)).toBe(true);
    expect(await t.store.revokeOAuthGrant(made.id, 'disconnected', account.id)).toBe(false);
    expect(await t.store.rotateRefreshToken(issued.refreshHash, () => true, tokens())).toMatchObject({ ok: false });
    expect(t.store.listOAuthGrants(account.id)).toEqual([]);
  });

  it('prunes expired codes and tokens, and grants revoked long ago', async () => {
    const { account, grant: made, issued } = await grant();
    await t.store.revokeOAuthGrant(made.id, 'disconnected', account.id);
    t.clock.now += 2 * HOUR_MS;
    expect(await t.store.pruneOAuth(t.clock.now + 1)).toBeGreaterThan(0);
    expect(t.store.findToken(issued.accessHash)).toBeUndefined();
    expect(t.store.getOAuthGrant(made.id)).toBeUndefined();
  });
});
