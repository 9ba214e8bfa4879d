import { newId } from './ids.js';
import { compact, prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { AccountRecord, ApiTokenInfo, Role, SiteRecord } from './types.js';

/** Accounts, their API tokens (by hash) and site roles. */
export interface AccountRecords {
  /** A new account; `undefined` when the e-mail address is already registered. */
  createAccount(input: { email: string; plan: AccountRecord['plan'] }): Promise<AccountRecord | undefined>;
  getAccount(id: string): AccountRecord | undefined;
  getAccountByEmail(email: string): AccountRecord | undefined;
  /**
   * Changes an account's plan, and in the same transaction the plan of every site the account
   * owns (limits, history reach and badge follow the owner's plan at once).
   */
  setAccountPlan(id: string, plan: AccountRecord['plan']): Promise<AccountRecord | undefined>;
  /** Records an API token by its hash; the token itself is never stored. */
  addApiToken(input: { accountId: string; tokenHash: string; name: string }): Promise<ApiTokenInfo>;
  /** The account's API tokens, oldest first (never the tokens themselves). */
  listApiTokens(accountId: string): ApiTokenInfo[];
  /** Revokes one of the account's API tokens at once; false when it has no token with that id. */
  revokeApiToken(accountId: string, tokenId: string): Promise<boolean>;
  /** Records that a token was used (callers throttle this; it is a write). */
  touchApiToken(tokenHash: string, at: number): Promise<void>;
  /** The caller's role on a site, if a member. */
  getRole(siteId: string, accountId: string): Role | undefined;
  /** Adds or changes a member's role. */
  setMember(siteId: string, accountId: string, role: Role): Promise<void>;
}

/** Accounts, their API tokens (by hash) and site roles. */
export function accountOps(dbs: MetadataDbs, now: () => number, announce: (site: SiteRecord) => void): AccountRecords {
  return {
    createAccount({ email, plan }) {
      const key = emailKey(email);
      return dbs.transact((): AccountRecord | undefined => {
        if (dbs.accountEmails.get(key) !== undefined) return undefined;
        const account: AccountRecord = { id: newId('acct_'), email: key, plan, createdAt: now() };
        void dbs.accounts.put(account.id, account);
        void dbs.accountEmails.put(key, account.id);
        return account;
      });
    },
    getAccount: (id) => dbs.accounts.get(id),
    getAccountByEmail(email) {
      const id = dbs.accountEmails.get(emailKey(email));
      return id === undefined ? undefined : dbs.accounts.get(id);
    },
    async setAccountPlan(id, plan) {
      const changed = await dbs.transact((): { account: AccountRecord; sites: SiteRecord[] } | undefined => {
        const account = dbs.accounts.get(id);
        if (!account) return undefined;
        const updated = { ...account, plan };
        void dbs.accounts.put(id, updated);
        // The sites that belong to the account (made or claimed by it), not those it co-owns.
        const sites: SiteRecord[] = [];
        const range = prefixRange(id);
        for (const { key, value: role } of range ? dbs.memberSites.getRange(range) : []) {
          const site = role === 'owner' ? dbs.sites.get(key[1]) : undefined;
          if (!site || site.accountId !== id || site.state === 'deleted' || site.plan === plan) continue;
          const moved = { ...site, plan };
          void dbs.sites.put(site.id, moved);
          sites.push(moved);
        }
        return { account: updated, sites };
      });
      // Serving threads drop their cached records (badge, limits) at once.
      for (const site of changed?.sites ?? []) announce(site);
      return changed?.account;
    },
    addApiToken({ accountId, tokenHash, name }) {
      return dbs.transact((): ApiTokenInfo => {
        const info: ApiTokenInfo = { id: newId('tok_'), name, createdAt: now() };
        void dbs.tokens.put(tokenHash, { kind: 'api', accountId, name, createdAt: info.createdAt, id: info.id });
        void dbs.accountTokens.put([accountId, info.id], { tokenHash, name, createdAt: info.createdAt });
        return info;
      });
    },
    listApiTokens(accountId) {
      const range = prefixRange(accountId);
      if (!range) return [];
      const tokens = Array.from(dbs.accountTokens.getRange(range), ({ key, value }) =>
        compact<ApiTokenInfo>({ id: key[1], name: value.name, createdAt: value.createdAt, lastUsedAt: value.lastUsedAt }),
      );
      return tokens.sort((a, b) => a.createdAt - b.createdAt);
    },
    revokeApiToken(accountId, tokenId) {
      return dbs.transact((): boolean => {
        const row = dbs.accountTokens.get([accountId, tokenId]);
        if (!row) return false;
        void dbs.accountTokens.remove([accountId, tokenId]);
        void dbs.tokens.remove(row.tokenHash);
        return true;
      });
    },
    async touchApiToken(tokenHash, at) {
      await dbs.transact(() => {
        const token = dbs.tokens.get(tokenHash);
        if (token?.kind !== 'api' || token.id === undefined) return;
        const row = dbs.accountTokens.get([token.accountId, token.id]);
        if (row) void dbs.accountTokens.put([token.accountId, token.id], { ...row, lastUsedAt: at });
      });
    },
    getRole: (siteId, accountId) => dbs.members.get([siteId, accountId])?.role,
    async setMember(siteId, accountId, role) {
      await dbs.transact(() => {
        const existing = dbs.members.get([siteId, accountId]);
        void dbs.members.put([siteId, accountId], { siteId, accountId, role, addedAt: existing?.addedAt ?? now() });
        void dbs.memberSites.put([accountId, siteId], role);
      });
    },
  };
}

/** E-mail addresses are stored trimmed and lower-cased (accounts and invites alike). */
/** Accounts and invites are found by the address as typed, trimmed and lower-cased. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}
