import { randomBytes, randomInt } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { hashToken, type AccountRecord, type SessionRecord } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { signInMail } from './mail-templates.js';
import { parseEmail } from './members.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';

/** A sign-in link and code work this long, once. */
export const SIGN_IN_LIFETIME_MS = 15 * 60_000;
/** Wrong codes allowed before the sign-in locks. */
export const SIGN_IN_MAX_ATTEMPTS = 5;
/** Sessions last this long after their last use (sliding). */
export const SESSION_LIFETIME_MS = 30 * 24 * 3600_000;
/** A session's expiry is pushed forward at most this often (each push is a write). */
const SESSION_REFRESH_MS = 24 * 3600_000;

export interface StartedSignIn {
  /** Secret id (`si_…`): in the e-mailed link, and in a cookie of the browser that asked. */
  id: string;
  email: string;
  expiresAt: number;
}

export interface FinishedSignIn {
  account: AccountRecord;
  /** True when this sign-in created the account. */
  created: boolean;
  next?: string;
}

export interface Session {
  account: AccountRecord;
  /** Identifies the session (rate limits, CSRF binding); the cookie value is never stored. */
  sessionHash: string;
  record: SessionRecord;
}

export interface PeopleOperations {
  /**
   * E-mails a one-time link and a 6-digit code to the address (capped per address and per
   * network). Works the same whether or not an account exists, so it reveals nothing.
   */
  startSignIn(input: { email: unknown; next?: string; network: string }): Promise<StartedSignIn>;
  /**
   * Uses the sign-in up (by its link, or by its code from the browser that asked) and returns the
   * account, creating a Free account on an address's first sign-in.
   */
  finishSignIn(input: { id: string; code?: string }): Promise<FinishedSignIn>;
  /** The pending sign-in's address, for the page that asks for the code (undefined when gone). */
  pendingSignIn(id: string): { email: string; next?: string } | undefined;
  createSession(account: AccountRecord): Promise<{ cookie: string; record: SessionRecord }>;
  /** The signed-in person behind a session cookie, extending the session as it is used. */
  resolveSession(cookie: string | undefined): Promise<Session | undefined>;
  endSession(cookie: string): Promise<void>;
  /** The server's key for tokens of forms shown to people who are not signed in. */
  formKey(): Promise<string>;
}

const signInError = (reason: string): ServiceError => {
  const messages: Record<string, string> = {
    not_found: 'This sign-in link is not valid. Ask for a new one.',
    used: 'This sign-in link or code was already used. Ask for a new one.',
    expired: 'This sign-in link or code has expired (they last 15 minutes). Ask for a new one.',
    locked: 'Too many wrong codes: this sign-in is locked. Ask for a new link.',
  };
  return new ServiceError(reason === 'not_found' ? 'not_found' : 'bad_request', messages[reason] ?? messages.not_found!, { details: { reason } });
};

/** Signing in by e-mail and browser sessions, for the account app. */
export function peopleOperations(deps: OperationsDeps): PeopleOperations {
  const { store, config, log, mailer } = deps;

  return {
    async startSignIn(input) {
      const email = parseEmail(input.email);
      await takeOrRefuse(
        store,
        [
          cap(`signin-address:${email}`, config.app.signInPerAddressPerHour, HOUR_MS),
          cap(`signin-network:${input.network}`, config.app.signInPerNetworkPerHour, HOUR_MS),
        ],
        (seconds) => ({
          message: `Too many sign-in e-mails were asked for; try again in ${Math.ceil(seconds / 60)} minutes.`,
          agentMessage: `Sign-in e-mails are capped per address and per network. Try again in ${Math.ceil(seconds / 60)} minutes.`,
        }),
      );
      const id = `si_${randomBytes(24).toString('base64url')}`;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const createdAt = deps.now();
      const expiresAt = createdAt + SIGN_IN_LIFETIME_MS;
      await store.createSignIn(hashToken(id), { email, codeHash: hashToken(code), createdAt, expiresAt, attempts: 0, ...(input.next ? { next: input.next } : {}) });
      const link = `${config.publicUrls.app}/login/verify?token=${id}`;
      try {
        await mailer.send(signInMail({ to: email, link, code, minutes: SIGN_IN_LIFETIME_MS / 60_000 }));
      } catch (err) {
        log.error({ err }, 'mail.failed');
        throw new ServiceError('unavailable', 'The sign-in e-mail could not be sent. Please try again in a minute.', { headers: { 'Retry-After': '60' } });
      }
      log.info({}, 'signin.started');
      return { id, email, expiresAt };
    },

    async finishSignIn({ id, code }) {
      if (typeof id !== 'string' || !id.startsWith('si_')) throw signInError('not_found');
      if (code !== undefined && !/^\d{6}$/.test(code.replace(/\s/g, ''))) {
        throw new ServiceError('bad_request', 'The code has 6 digits.', { details: { field: 'code', reason: 'wrong_code' } });
      }
      const outcome = await store.useSignIn(hashToken(id), {
        codeHash: code === undefined ? undefined : hashToken(code.replace(/\s/g, '')),
        maxAttempts: SIGN_IN_MAX_ATTEMPTS,
      });
      if (!outcome.ok) {
        if (outcome.reason === 'wrong_code') {
          const left = outcome.attemptsLeft ?? 0;
          throw new ServiceError('bad_request', `That code is not right. ${left} ${left === 1 ? 'try' : 'tries'} left.`, {
            details: { field: 'code', reason: 'wrong_code', attempts_left: left },
          });
        }
        throw signInError(outcome.reason);
      }
      const { email, next } = outcome.signIn;
      let account = store.getAccountByEmail(email);
      let created = false;
      if (!account) {
        account = (await store.createAccount({ email, plan: 'free' })) ?? store.getAccountByEmail(email);
        created = account !== undefined;
      }
      if (!account) throw new Error('account creation failed');
      log.info({ account: account.id, created }, 'signin.finished');
      return { account, created, ...(next ? { next } : {}) };
    },

    pendingSignIn(id) {
      if (typeof id !== 'string' || !id.startsWith('si_')) return undefined;
      const signIn = store.getSignIn(hashToken(id));
      if (!signIn || signIn.usedAt !== undefined || signIn.expiresAt <= deps.now() || signIn.attempts >= SIGN_IN_MAX_ATTEMPTS) return undefined;
      return { email: signIn.email, ...(signIn.next ? { next: signIn.next } : {}) };
    },

    async createSession(account) {
      const cookie = `ses_${randomBytes(32).toString('base64url')}`;
      const now = deps.now();
      const record: SessionRecord = { accountId: account.id, createdAt: now, expiresAt: now + SESSION_LIFETIME_MS, csrfSecret: randomBytes(32).toString('base64url') };
      await store.createSession(hashToken(cookie), record);
      return { cookie, record };
    },

    async resolveSession(cookie) {
      if (typeof cookie !== 'string' || !cookie.startsWith('ses_')) return undefined;
      const sessionHash = hashToken(cookie);
      const record = store.getSession(sessionHash);
      const account = record && store.getAccount(record.accountId);
      if (!record || !account) return undefined;
      const now = deps.now();
      if (record.expiresAt - now < SESSION_LIFETIME_MS - SESSION_REFRESH_MS) {
        const expiresAt = now + SESSION_LIFETIME_MS;
        await store.extendSession(sessionHash, expiresAt);
        return { account, sessionHash, record: { ...record, expiresAt } };
      }
      return { account, sessionHash, record };
    },

    formKey: () => store.ensureSecret('form-key', () => randomBytes(32).toString('base64url')),

    async endSession(cookie) {
      if (typeof cookie === 'string' && cookie.startsWith('ses_')) await store.deleteSession(hashToken(cookie));
    },
  };
}
