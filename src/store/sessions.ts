import { newId, sameHash } from './ids.js';
import type { MetadataDbs } from './metadata-dbs.js';
import type { ReportRecord, SignInOutcome, Store } from './types.js';

type PeopleOps = Pick<
  Store,
  'createSession' | 'getSession' | 'extendSession' | 'deleteSession' | 'createSignIn' | 'getSignIn' | 'useSignIn' | 'createReport' | 'listReports' | 'resolveReport' | 'ensureSecret'
>;

/**
 * What the account app keeps for people: browser sessions and pending sign-ins (both by the hash
 * of their secret), and abuse reports. Expiry is judged here at read time, as for sites.
 */
export function peopleOps(dbs: MetadataDbs, now: () => number): PeopleOps {
  return {
    async createSession(sessionHash, record) {
      await dbs.sessions.put(sessionHash, record);
    },
    getSession(sessionHash) {
      const session = dbs.sessions.get(sessionHash);
      return session && session.expiresAt > now() ? session : undefined;
    },
    async extendSession(sessionHash, expiresAt) {
      await dbs.env.transaction(() => {
        const session = dbs.sessions.get(sessionHash);
        if (session) void dbs.sessions.put(sessionHash, { ...session, expiresAt });
      });
    },
    async deleteSession(sessionHash) {
      await dbs.sessions.remove(sessionHash);
    },

    async createSignIn(id, record) {
      await dbs.signIns.put(id, record);
    },
    getSignIn: (id) => dbs.signIns.get(id),
    useSignIn(id, { proof, maxAttempts }) {
      return dbs.env.transaction((): SignInOutcome => {
        const signIn = dbs.signIns.get(id);
        // Records written before sign-ins had two secrets have no hashes: they match nothing.
        const expected = proof.kind === 'link' ? signIn?.linkHash : signIn?.browserHash;
        if (!signIn || expected === undefined || !sameHash(expected, proof.secretHash)) return { ok: false, reason: 'not_found' };
        if (signIn.usedAt !== undefined) return { ok: false, reason: 'used' };
        if (signIn.attempts >= maxAttempts) return { ok: false, reason: 'locked' };
        const at = now();
        if (signIn.expiresAt <= at) return { ok: false, reason: 'expired' };
        if (proof.kind === 'browser' && !sameHash(signIn.codeHash, proof.codeHash)) {
          const attempts = signIn.attempts + 1;
          void dbs.signIns.put(id, { ...signIn, attempts });
          return attempts >= maxAttempts ? { ok: false, reason: 'locked' } : { ok: false, reason: 'wrong_code', attemptsLeft: maxAttempts - attempts };
        }
        const used = { ...signIn, usedAt: at };
        void dbs.signIns.put(id, used);
        return { ok: true, signIn: used };
      });
    },

    async ensureSecret(name, make) {
      const existing = dbs.secrets.get(name);
      if (existing !== undefined) return existing;
      // Inside the write lock, so two threads starting at once agree on one value.
      return dbs.env.transaction((): string => {
        const raced = dbs.secrets.get(name);
        if (raced !== undefined) return raced;
        const value = make();
        void dbs.secrets.put(name, value);
        return value;
      });
    },

    async createReport(input) {
      const report: ReportRecord = { ...input, id: newId('rep_'), createdAt: now(), status: 'open' };
      await dbs.reports.put(report.id, report);
      return report;
    },
    listReports(options = {}) {
      const reports = Array.from(dbs.reports.getRange({ snapshot: false }), ({ value }) => value);
      return reports.filter((r) => options.status === undefined || r.status === options.status).sort((a, b) => a.createdAt - b.createdAt);
    },
    resolveReport(id, note) {
      return dbs.env.transaction((): ReportRecord | undefined => {
        const report = dbs.reports.get(id);
        if (!report) return undefined;
        const resolved: ReportRecord = { ...report, status: 'resolved', resolvedAt: now(), ...(note ? { note } : {}) };
        void dbs.reports.put(id, resolved);
        return resolved;
      });
    },
  };
}
