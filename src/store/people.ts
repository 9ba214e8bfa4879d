import { newId, sameHash } from './ids.js';
import type { MetadataDbs } from './metadata-dbs.js';
import type { ReportRecord, SessionRecord, SignInOutcome, SignInProof, SignInRecord } from './types.js';

/** Browser sessions, pending sign-ins, abuse reports and server secrets. */
export interface PeopleRecords {
  /** A new browser session (by the hash of its cookie value). */
  createSession(sessionHash: string, record: SessionRecord): Promise<void>;
  /** The session, if it exists and has not expired. */
  getSession(sessionHash: string): SessionRecord | undefined;
  /** Moves a session's expiry (sliding sessions); no-op for an unknown one. */
  extendSession(sessionHash: string, expiresAt: number): Promise<void>;
  deleteSession(sessionHash: string): Promise<void>;
  /** A pending sign-in (e-mailed link and code), by its id; its secrets are kept as hashes. */
  createSignIn(id: string, record: SignInRecord): Promise<void>;
  getSignIn(id: string): SignInRecord | undefined;
  /**
   * Uses a sign-in up, atomically, with one of its two proofs: the e-mailed link's secret, or
   * the asking browser's secret together with the code (a wrong code counts an attempt, and
   * `maxAttempts` wrong ones lock the sign-in). A proof whose secret does not match is
   * `not_found`, exactly like an unknown id.
   */
  useSignIn(id: string, check: { proof: SignInProof; maxAttempts: number }): Promise<SignInOutcome>;
  /** Stores an abuse report; returns it with its id. */
  createReport(input: Omit<ReportRecord, 'id' | 'createdAt' | 'status'>): Promise<ReportRecord>;
  /** Reports, oldest first; `status` filters. */
  listReports(options?: { status?: ReportRecord['status'] }): ReportRecord[];
  /** Marks a report resolved; undefined when unknown. */
  resolveReport(id: string, note?: string): Promise<ReportRecord | undefined>;
  /**
   * A named server secret, made once with `make` and then the same for every thread and process
   * on the data directory (keys for form tokens and the like).
   */
  ensureSecret(name: string, make: () => string): Promise<string>;
}

/**
 * What the account app keeps for people: browser sessions and pending sign-ins (both by the hash
 * of their secret), and abuse reports. Expiry is judged here at read time, as for sites.
 */
export function peopleOps(dbs: MetadataDbs, now: () => number): PeopleRecords {
  return {
    async createSession(sessionHash, record) {
      await dbs.transact(() => void dbs.sessions.put(sessionHash, record));
    },
    getSession(sessionHash) {
      const session = dbs.sessions.get(sessionHash);
      return session && session.expiresAt > now() ? session : undefined;
    },
    async extendSession(sessionHash, expiresAt) {
      await dbs.transact(() => {
        const session = dbs.sessions.get(sessionHash);
        if (session) void dbs.sessions.put(sessionHash, { ...session, expiresAt });
      });
    },
    async deleteSession(sessionHash) {
      await dbs.transact(() => void dbs.sessions.remove(sessionHash));
    },

    async createSignIn(id, record) {
      await dbs.transact(() => void dbs.signIns.put(id, record));
    },
    getSignIn: (id) => dbs.signIns.get(id),
    useSignIn(id, { proof, maxAttempts }) {
      return dbs.transact((): SignInOutcome => {
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
      return dbs.transact((): string => {
        const raced = dbs.secrets.get(name);
        if (raced !== undefined) return raced;
        const value = make();
        void dbs.secrets.put(name, value);
        return value;
      });
    },

    async createReport(input) {
      const report: ReportRecord = { ...input, id: newId('rep_'), createdAt: now(), status: 'open' };
      await dbs.transact(() => void dbs.reports.put(report.id, report));
      return report;
    },
    listReports(options = {}) {
      const reports = Array.from(dbs.reports.getRange({ snapshot: false }), ({ value }) => value);
      return reports.filter((r) => options.status === undefined || r.status === options.status).sort((a, b) => a.createdAt - b.createdAt);
    },
    resolveReport(id, note) {
      return dbs.transact((): ReportRecord | undefined => {
        const report = dbs.reports.get(id);
        if (!report) return undefined;
        const resolved: ReportRecord = { ...report, status: 'resolved', resolvedAt: now(), ...(note ? { note } : {}) };
        void dbs.reports.put(id, resolved);
        return resolved;
      });
    },
  };
}
