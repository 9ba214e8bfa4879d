import { DEVICE_RECORD_GRACE_MS } from './device-grants.js';
import { newId } from './ids.js';
import { prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { AuthorizationCodeRecord, CodeRedemption, IssuedTokens, OAuthClientRecord, OAuthGrantRecord, RefreshOutcome } from './types.js';

/** OAuth clients, codes and grants of the authorization server. */
export interface OAuthRecords {
  /** Records (or refreshes) an OAuth client. */
  putOAuthClient(client: OAuthClientRecord): Promise<void>;
  getOAuthClient(clientId: string): OAuthClientRecord | undefined;
  /** A new authorization code, by the hash of the code. */
  createAuthorizationCode(codeHash: string, record: AuthorizationCodeRecord): Promise<void>;
  /**
   * Exchanges a code for a new grant and its first tokens, atomically and once. `check` sees the
   * code's record (client, redirect URI, PKCE, resource); false burns the code (`mismatch`). A code
   * already used revokes the grant it was exchanged for (`reused`).
   */
  redeemAuthorizationCode(
    codeHash: string,
    check: (code: AuthorizationCodeRecord) => boolean,
    grant: Omit<OAuthGrantRecord, 'accountId' | 'clientId' | 'resource' | 'scope' | 'refreshHash' | 'createdAt'>,
    tokens: IssuedTokens,
  ): Promise<CodeRedemption>;
  /**
   * Rotates a refresh token: the grant's current refresh token is swapped for new tokens. An older
   * refresh token of the grant revokes the whole grant (`reused`); `check` (client, resource) false
   * refuses without rotating.
   */
  rotateRefreshToken(refreshHash: string, check: (grant: OAuthGrantRecord) => boolean, tokens: IssuedTokens): Promise<RefreshOutcome>;
  getOAuthGrant(grantId: string): OAuthGrantRecord | undefined;
  /** The account's standing grants, oldest first. */
  listOAuthGrants(accountId: string): OAuthGrantRecord[];
  /** Revokes a grant (every token it issued stops at once); with `accountId`, only that account's. */
  revokeOAuthGrant(grantId: string, reason: NonNullable<OAuthGrantRecord['revokedReason']>, accountId?: string): Promise<boolean>;
  /** Forgets one access token (RFC 7009 revocation of an access token). */
  removeOAuthToken(tokenHash: string): Promise<void>;
  /** Drops expired codes and OAuth tokens, and grants revoked before `before`; returns how many. */
  pruneOAuth(before: number): Promise<number>;
}

/**
 * What the OAuth authorization server keeps: clients, single-use codes, and grants (one per
 * approval) whose access and refresh tokens live in `tokens` by hash. A token is good only while
 * its grant stands, so revoking a grant stops all its tokens in one write.
 */
export function oauthOps(dbs: MetadataDbs, now: () => number): OAuthRecords {
  /** Marks a grant revoked and forgets its current refresh token. Inside a transaction. */
  function revokeInTxn(grant: OAuthGrantRecord, reason: NonNullable<OAuthGrantRecord['revokedReason']>): void {
    if (grant.revokedAt !== undefined) return;
    void dbs.oauthGrants.put(grant.id, { ...grant, revokedAt: now(), revokedReason: reason });
    void dbs.tokens.remove(grant.refreshHash);
    void dbs.accountGrants.remove([grant.accountId, grant.id]);
  }

  function putTokens(grantId: string, tokens: { accessHash: string; accessExpiresAt: number; refreshHash: string; refreshExpiresAt: number }): void {
    void dbs.tokens.put(tokens.accessHash, { kind: 'oauth_access', grantId, expiresAt: tokens.accessExpiresAt });
    void dbs.tokens.put(tokens.refreshHash, { kind: 'oauth_refresh', grantId, expiresAt: tokens.refreshExpiresAt });
  }

  return {
    async putOAuthClient(client) {
      await dbs.transact(() => void dbs.oauthClients.put(client.id, client));
    },
    getOAuthClient: (clientId) => dbs.oauthClients.get(clientId),

    async createAuthorizationCode(codeHash, record) {
      await dbs.transact(() => void dbs.oauthCodes.put(codeHash, record));
    },

    redeemAuthorizationCode(codeHash, check, fields, tokens) {
      return dbs.transact(() => {
        const entry = dbs.oauthCodes.get(codeHash);
        // A device code (or a user code's index) is no authorization code, whatever a client sends.
        if (!entry || 'kind' in entry) return { ok: false, reason: 'not_found' } as const;
        const code = entry;
        if (code.usedAt !== undefined) {
          // RFC 6749 §4.1.2: a code used twice may have been stolen; what it granted is revoked.
          const granted = code.grantId === undefined ? undefined : dbs.oauthGrants.get(code.grantId);
          if (granted) revokeInTxn(granted, 'code_reused');
          return { ok: false, reason: 'reused' } as const;
        }
        if (code.expiresAt <= now()) return { ok: false, reason: 'expired' } as const;
        if (!check(code)) {
          void dbs.oauthCodes.put(codeHash, { ...code, usedAt: now() });
          return { ok: false, reason: 'mismatch' } as const;
        }
        const grant: OAuthGrantRecord = {
          ...fields,
          id: fields.id || newId('grant_'),
          accountId: code.accountId,
          clientId: code.clientId,
          resource: code.resource,
          scope: code.scope,
          refreshHash: tokens.refreshHash,
          createdAt: now(),
        };
        void dbs.oauthCodes.put(codeHash, { ...code, usedAt: now(), grantId: grant.id });
        void dbs.oauthGrants.put(grant.id, grant);
        void dbs.accountGrants.put([grant.accountId, grant.id], 1);
        putTokens(grant.id, tokens);
        return { ok: true, grant } as const;
      });
    },

    rotateRefreshToken(refreshHash, check, tokens) {
      return dbs.transact(() => {
        const record = dbs.tokens.get(refreshHash);
        if (record?.kind !== 'oauth_refresh') return { ok: false, reason: 'not_found' } as const;
        const grant = dbs.oauthGrants.get(record.grantId);
        if (!grant || grant.revokedAt !== undefined) return { ok: false, reason: 'revoked' } as const;
        if (grant.refreshHash !== refreshHash) {
          // A rotated-out refresh token came back: one of its holders is not the app. Stop them all.
          revokeInTxn(grant, 'refresh_reused');
          return { ok: false, reason: 'reused' } as const;
        }
        if (record.expiresAt <= now()) return { ok: false, reason: 'expired' } as const;
        if (!check(grant)) return { ok: false, reason: 'mismatch' } as const;
        const updated: OAuthGrantRecord = { ...grant, refreshHash: tokens.refreshHash, lastRefreshedAt: now() };
        void dbs.oauthGrants.put(grant.id, updated);
        // The old refresh token's record stays (until it expires) so a replay is recognised.
        putTokens(grant.id, tokens);
        return { ok: true, grant: updated } as const;
      });
    },

    getOAuthGrant: (grantId) => dbs.oauthGrants.get(grantId),

    listOAuthGrants(accountId) {
      const range = prefixRange(accountId);
      if (!range) return [];
      const grants: OAuthGrantRecord[] = [];
      for (const { key } of dbs.accountGrants.getRange(range)) {
        const grant = dbs.oauthGrants.get(key[1]);
        if (grant && grant.revokedAt === undefined) grants.push(grant);
      }
      return grants.sort((a, b) => a.createdAt - b.createdAt);
    },

    revokeOAuthGrant(grantId, reason, accountId) {
      return dbs.transact((): boolean => {
        const grant = dbs.oauthGrants.get(grantId);
        if (!grant || grant.revokedAt !== undefined) return false;
        if (accountId !== undefined && grant.accountId !== accountId) return false;
        revokeInTxn(grant, reason);
        return true;
      });
    },

    async removeOAuthToken(tokenHash) {
      await dbs.transact(() => {
        const record = dbs.tokens.get(tokenHash);
        if (record?.kind === 'oauth_access') void dbs.tokens.remove(tokenHash);
      });
    },

    pruneOAuth(before) {
      return dbs.transact(() => {
        let removed = 0;
        const at = now();
        for (const { key, value } of dbs.oauthCodes.getRange({ snapshot: false })) {
          // Device sign-ins stay a while past their expiry, to answer `expired_token` rather than
          // `invalid_grant` to a client still polling.
          const keptUntil = 'kind' in value ? value.expiresAt + DEVICE_RECORD_GRACE_MS : value.expiresAt;
          if (keptUntil <= at) {
            void dbs.oauthCodes.remove(key);
            removed++;
          }
        }
        for (const { key, value } of dbs.tokens.getRange({ snapshot: false })) {
          if ((value.kind === 'oauth_access' || value.kind === 'oauth_refresh') && value.expiresAt <= at) {
            void dbs.tokens.remove(key);
            removed++;
          }
        }
        for (const { key, value } of dbs.oauthGrants.getRange({ snapshot: false })) {
          if (value.revokedAt !== undefined && value.revokedAt < before) {
            void dbs.oauthGrants.remove(key);
            removed++;
          }
        }
        return removed;
      });
    },
  };
}
