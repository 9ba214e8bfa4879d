import { createHash } from 'node:crypto';
import type { SiteAccessConfig } from '../config.js';
import type { Logger } from '../log.js';
import { rateWindow, slotsOf } from '../rules/index.js';
import { verifyPassword, type RateCheck, type SiteRecord, type Store } from '../store/index.js';

/**
 * The password of a protected site, checked for the gate (access.ts): HTTP Basic on every request
 * or the sign-in form. Every try is counted before anything about it is known, against the
 * network's budget and the site's, in one atomic step with all other tries (cluster-wide in a
 * cluster): past a cap every answer is `429`, the right password's included, and tries sent at
 * once cannot slip past it. A right password then gives its tries back, so a visitor who sends it
 * with every request (as browsers and `curl -u` do with HTTP Basic) never uses the budget up.
 * Hashing is bounded across the process: each scrypt run takes about 16 MB and 70 ms of libuv's
 * thread pool, which file reads and compression share.
 */

export type PasswordOutcome = 'ok' | 'wrong' | { retryAfterMs: number } | 'busy';

export interface PasswordChecker {
  /** Counts one try by network `net` and checks it. `busy`: too many hashes run at once, try again soon. */
  check(site: SiteRecord, password: string, net: string): Promise<PasswordOutcome>;
}

export interface PasswordCheckerOptions {
  store: Pick<Store, 'takeRateTokens'>;
  config: SiteAccessConfig;
  log: Logger;
  now: () => number;
  /** The process's slot counter (one Int32, shared with the other HTTP threads); a thread of its own without it. */
  hashSlots?: SharedArrayBuffer;
}

const WINDOW_MS = 3600_000;
/** Passwords that checked out lately, so HTTP Basic on every request costs no scrypt run. */
const KNOWN_GOOD_MAX = 1000;

export function createPasswordChecker(options: PasswordCheckerOptions): PasswordChecker {
  const { store, config, log, now } = options;
  const slots = slotsOf(config.passwordHashesAtOnce, options.hashSlots);
  const knownGood = new Set<string>();

  const budgets = (site: SiteRecord, net: string): RateCheck[] => {
    const checks: RateCheck[] = [];
    if (config.passwordTriesPerHour > 0) checks.push({ scope: `site-password:${net}`, limit: config.passwordTriesPerHour, windowMs: WINDOW_MS });
    if (config.passwordTriesPerSitePerHour > 0)
      checks.push({ scope: `site-password-site:${site.id}`, limit: config.passwordTriesPerSitePerHour, windowMs: WINDOW_MS });
    return checks;
  };

  /** Whether the password is right, once its try is counted: from memory, or by one bounded scrypt run. */
  const judge = async (site: SiteRecord, password: string): Promise<'ok' | 'wrong' | 'busy'> => {
    const key = createHash('sha256').update(`${site.id}\u0000${site.access!.since}\u0000${password}`).digest('base64url');
    if (knownGood.has(key)) return 'ok';
    const hash = site.access!.passwordHash;
    if (hash === undefined) return 'wrong';
    if (!slots.tryTake()) return 'busy';
    let right: boolean;
    try {
      right = await verifyPassword(password, hash);
    } finally {
      slots.give();
    }
    if (!right) return 'wrong';
    if (knownGood.size >= KNOWN_GOOD_MAX) knownGood.clear();
    knownGood.add(key);
    return 'ok';
  };

  /** Gives tries back into the window they were taken from (a new window starts full anyway). */
  const giveBack = async (checks: RateCheck[], takenAt: number): Promise<void> => {
    if (rateWindow(now(), WINDOW_MS).start !== rateWindow(takenAt, WINDOW_MS).start) return;
    try {
      await store.takeRateTokens(checks.map((check) => ({ ...check, hits: -1 })));
    } catch (err) {
      // The try stays counted: the visitor was let in all the same.
      log.warn({ err }, 'serve.password_tries_not_returned');
    }
  };

  return {
    async check(site, password, net) {
      const checks = budgets(site, net);
      const takenAt = now();
      if (checks.length > 0) {
        const taken = await store.takeRateTokens(checks);
        if (!taken.allowed) return { retryAfterMs: taken.retryAfterMs };
      }
      const outcome = await judge(site, password);
      // Only a right password gives its try back. One that could not be judged (`busy`) keeps it:
      // else, with the hashing bound kept full, a password remembered as good would answer 200 and
      // every other 503, for free.
      // Not awaited: the visitor need not wait for it, and until it lands the count only errs high.
      if (outcome === 'ok' && checks.length > 0) void giveBack(checks, takenAt);
      return outcome;
    },
  };
}
