import { newId } from './ids.js';
import type { MetadataDbs } from './metadata-dbs.js';
import type { AccountRecord, Store } from './types.js';

type AccountOps = Pick<Store, 'createAccount' | 'getAccount' | 'getAccountByEmail' | 'setAccountPlan' | 'addApiToken' | 'getRole' | 'setMember'>;

/** Accounts, their API tokens (by hash) and site roles. */
export function accountOps(dbs: MetadataDbs, now: () => number): AccountOps {
  const normalise = normaliseEmail;

  return {
    createAccount({ email, plan }) {
      const key = normalise(email);
      return dbs.env.transaction((): AccountRecord | undefined => {
        if (dbs.accountEmails.get(key) !== undefined) return undefined;
        const account: AccountRecord = { id: newId('acct_'), email: key, plan, createdAt: now() };
        void dbs.accounts.put(account.id, account);
        void dbs.accountEmails.put(key, account.id);
        return account;
      });
    },
    getAccount: (id) => dbs.accounts.get(id),
    getAccountByEmail(email) {
      const id = dbs.accountEmails.get(normalise(email));
      return id === undefined ? undefined : dbs.accounts.get(id);
    },
    setAccountPlan(id, plan) {
      return dbs.env.transaction((): AccountRecord | undefined => {
        const account = dbs.accounts.get(id);
        if (!account) return undefined;
        const updated = { ...account, plan };
        void dbs.accounts.put(id, updated);
        return updated;
      });
    },
    async addApiToken({ accountId, tokenHash, name }) {
      await dbs.tokens.put(tokenHash, { kind: 'api', accountId, name, createdAt: now() });
    },
    getRole: (siteId, accountId) => dbs.members.get([siteId, accountId])?.role,
    async setMember(siteId, accountId, role) {
      await dbs.env.transaction(() => {
        const existing = dbs.members.get([siteId, accountId]);
        void dbs.members.put([siteId, accountId], { siteId, accountId, role, addedAt: existing?.addedAt ?? now() });
        void dbs.memberSites.put([accountId, siteId], role);
      });
    },
  };
}

/** E-mail addresses are stored trimmed and lower-cased (accounts and invites alike). */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
