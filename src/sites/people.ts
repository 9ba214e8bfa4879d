import { randomBytes, randomInt } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { hashToken, sameHash, type AccountRecord, type SessionRecord, type SignInProof } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { recordEvent } from './events.js';
import { signInMail } from '../outbound/index.js';
import { parseEmail } from './members.js';
import { cap, DAY_MS, HOUR_MS, takeOrRefuse } from './rate.js';

/** A sign-in link and code work this long, once. */
export const SIGN_IN_LIFETIME_MS = 15 * 60_000;
/** Wrong codes allowed before the sign-in locks. */
export const SIGN_IN_MAX_ATTEMPTS = 5;
/** Sessions last this long after their last use (sliding). */
export const SESSION_LIFETIME_MS = 30 * 24 * 3600_000;
/** A session's expiry is pushed forward at most this often (each push is a write). */
const SESSION_REFRESH_MS = 24 * 3600_000;

export interface StartedSignIn {
  /**
   * The asking browser's secret (`sb_…`), for its cookie. It is not the link's secret: alone it
   * finishes nothing, and with the e-mailed code it finishes the sign-in in that browser.
   */
  browserSecret: string;
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
   * Uses the sign-in up, by the e-mailed link's secret alone or by the asking browser's secret
   * with the e-mailed code, and returns the account, creating a Free account on an address's
   * first sign-in. Code attempts are capped per address (`PLINTH_SIGNIN_CODES_PER_ADDRESS`).
   */
  finishSignIn(input: SignInAnswer): Promise<FinishedSignIn>;
  /**
   * The pending sign-in's address, for the page that asks for the code (by the browser's secret)
   * or the page the link opens (by the link's secret); undefined when gone or not matching.
   */
  pendingSignIn(secret: { link: string } | { browser: string }): { email: string; next?: string } | undefined;
  createSession(account: AccountRecord): Promise<{ cookie: string; record: SessionRecord }>;
  /** The signed-in person behind a session cookie, extending the session as it is used. */
  resolveSession(cookie: string | undefined): Promise<Session | undefined>;
  endSession(cookie: string): Promise<void>;
  /** The server's key for tokens of forms shown to people who are not signed in. */
  formKey(): Promise<string>;
}

/** What a person sends to finish a sign-in. */
export type SignInAnswer = { link: string } | { browser: string; code: string };

const LINK_PREFIX = 'sl_';
const BROWSER_PREFIX = 'sb_';

/**
 * A sign-in secret is `<prefix><id>.<secret>`: the id finds the record, the secret is compared
 * with the hash kept for that kind of proof. The link and the browser get different secrets.
 */
function splitSecret(value: unknown, prefix: string): { id: string; secretHash: string } | undefined {
  if (typeof value !== 'string' || value.length > 200 || !value.startsWith(prefix)) return undefined;
  const match = /^([A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{32,64})$/.exec(value.slice(prefix.length));
  return match ? { id: match[1]!, secretHash: hashToken(match[2]!) } : undefined;
}

const randomPart = (bytes: number): string => randomBytes(bytes).toString('base64url');

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
      const id = randomPart(16);
      const linkSecret = randomPart(32);
      const browserSecret = randomPart(32);
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const createdAt = deps.now();
      const expiresAt = createdAt + SIGN_IN_LIFETIME_MS;
      await store.createSignIn(id, {
        email,
        linkHash: hashToken(linkSecret),
        browserHash: hashToken(browserSecret),
        codeHash: hashToken(code),
        createdAt,
        expiresAt,
        attempts: 0,
        ...(input.next ? { next: input.next } : {}),
      });
      const link = `${config.publicUrls.app}/login/verify?token=${LINK_PREFIX}${id}.${linkSecret}`;
      try {
        await mailer.send(signInMail({ to: email, link, code, minutes: SIGN_IN_LIFETIME_MS / 60_000 }));
      } catch (err) {
        log.error({ err }, 'mail.failed');
        throw new ServiceError('unavailable', 'The sign-in e-mail could not be sent. Please try again in a minute.', { headers: { 'Retry-After': '60' } });
      }
      log.info({}, 'signin.started');
      return { browserSecret: `${BROWSER_PREFIX}${id}.${browserSecret}`, email, expiresAt };
    },

    async finishSignIn(answer) {
      const byLink = 'link' in answer;
      const secret = byLink ? splitSecret(answer.link, LINK_PREFIX) : splitSecret(answer.browser, BROWSER_PREFIX);
      if (!secret) throw signInError('not_found');
      let proof: SignInProof;
      if (byLink) {
        proof = { kind: 'link', secretHash: secret.secretHash };
      } else {
        const code = typeof answer.code === 'string' ? answer.code.replace(/\s/g, '') : '';
        if (!/^\d{6}$/.test(code)) throw new ServiceError('bad_request', 'The code has 6 digits.', { details: { field: 'code', reason: 'wrong_code' } });
        const pending = store.getSignIn(secret.id);
        // Only the browser that asked spends the address's budget of codes.
        if (pending?.browserHash !== undefined && sameHash(pending.browserHash, secret.secretHash)) {
          await takeOrRefuse(store, [cap(`signin-code:${pending.email}`, config.app.signInCodesPerAddressPerDay, DAY_MS)], (seconds) => ({
            message: `Too many codes were tried for this address today; open the link in the e-mail instead, or try again in ${Math.ceil(seconds / 3600)} hours.`,
            agentMessage: 'Sign-in codes are capped per address per day. Open the link in the sign-in e-mail instead.',
          }));
        }
        proof = { kind: 'browser', secretHash: secret.secretHash, codeHash: hashToken(code) };
      }
      const outcome = await store.useSignIn(secret.id, { proof, maxAttempts: SIGN_IN_MAX_ATTEMPTS });
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
      log.info({ account: account.id, created, by: byLink ? 'link' : 'code' }, 'signin.finished');
      await recordEvent(
        deps,
        { kind: 'account', email: account.email, accountId: account.id },
        {
          kind: 'account.signed_in',
          accountId: account.id,
          details: { by: byLink ? 'link' : 'code', ...(created ? { created: true } : {}) },
        },
      );
      return { account, created, ...(next ? { next } : {}) };
    },

    pendingSignIn(which) {
      const byLink = 'link' in which;
      const secret = byLink ? splitSecret(which.link, LINK_PREFIX) : splitSecret(which.browser, BROWSER_PREFIX);
      const signIn = secret && store.getSignIn(secret.id);
      if (!secret || !signIn) return undefined;
      const expected = byLink ? signIn.linkHash : signIn.browserHash;
      if (expected === undefined || !sameHash(expected, secret.secretHash)) return undefined;
      if (signIn.usedAt !== undefined || signIn.expiresAt <= deps.now() || signIn.attempts >= SIGN_IN_MAX_ATTEMPTS) return undefined;
      return { email: signIn.email, ...(signIn.next ? { next: signIn.next } : {}) };
    },

    async createSession(account) {
      const cookie = `ses_${randomBytes(32).toString('base64url')}`;
      const now = deps.now();
      const record: SessionRecord = {
        accountId: account.id,
        createdAt: now,
        expiresAt: now + SESSION_LIFETIME_MS,
        csrfSecret: randomBytes(32).toString('base64url'),
      };
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
