import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { challengeName } from '../rules/index.js';
import type { TxtAnswer, TxtLookup } from '../outbound/index.js';
import type { DomainPatch, DomainRecord, EventActor, SiteRecord, Store } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { recordEvent, type EventKind } from './events.js';

/**
 * Verification of custom domains by their TXT record: on request, and periodically (the
 * sweeper): pending domains until they pass or a week goes by, active and suspended ones daily.
 * An active domain whose record is gone is suspended once the grace period is over; a suspended
 * one whose record is back is active again.
 */

/** A pending domain whose record is not found within this long fails. */
export const DOMAIN_PENDING_LIFETIME_MS = 7 * 24 * 3600_000;
/** Active and suspended domains are looked up again this often. */
export const DOMAIN_RECHECK_MS = 24 * 3600_000;
/** DNS lookups the periodic checks run at once. */
const CHECK_CONCURRENCY = 8;

/** The new status fields of a domain after one lookup at `at`. */
export function checkOutcome(record: DomainRecord, answer: TxtAnswer, at: number, graceMs: number): DomainPatch {
  const name = challengeName(record.domain);
  if (answer.kind === 'found' && answer.values.includes(record.token)) {
    return { status: 'active', reason: undefined, verifiedAt: at, checkedAt: at, failingSince: undefined };
  }
  const reason =
    answer.kind === 'error'
      ? `The DNS lookup of ${name} failed (${answer.code}); it is tried again later.`
      : answer.kind === 'none'
        ? `No TXT record was found at ${name}.`
        : `The TXT record at ${name} does not hold the value this site was given.`;
  switch (record.status) {
    case 'pending':
      if (at - record.createdAt >= DOMAIN_PENDING_LIFETIME_MS) {
        return { status: 'failed', reason: `${reason} The record was not found within 7 days; add the domain again to retry.`, checkedAt: at };
      }
      return { status: 'pending', reason, checkedAt: at };
    case 'active': {
      // A resolver that fails proves nothing about the record: never count it towards suspension.
      if (answer.kind === 'error') return { reason, checkedAt: at };
      const failingSince = record.failingSince ?? at;
      if (at - failingSince >= graceMs)
        return { status: 'suspended', reason: `${reason} The domain is suspended until the record is back.`, checkedAt: at, failingSince };
      return { status: 'active', reason, checkedAt: at, failingSince };
    }
    default:
      return { reason, checkedAt: at };
  }
}

/** Whether the periodic checks should look a domain up now. */
export function isCheckDue(record: DomainRecord, at: number): boolean {
  if (record.status === 'failed') return false;
  if (record.status === 'pending') return true;
  return at - (record.checkedAt ?? record.verifiedAt ?? record.createdAt) >= DOMAIN_RECHECK_MS;
}

/**
 * Whether another site's claim holds the claim's domain (it was verified first): then this claim
 * waits, is shown `taken`, and is not looked up (it could not become active).
 */
export function isHeldElsewhere(store: Pick<Store, 'getDomainHolder'>, record: DomainRecord): boolean {
  const holder = store.getDomainHolder(record.domain);
  return holder !== undefined && holder.siteId !== record.siteId;
}

/**
 * Looks a domain up and records the outcome, unless the claim changed meanwhile (then undefined).
 * A claim the store does not let become active (another site's was verified first) keeps its status.
 */
export async function checkDomain(
  store: Store,
  lookup: TxtLookup,
  record: DomainRecord,
  now: () => number,
  graceMs: number,
): Promise<DomainRecord | undefined> {
  const answer = await lookup(challengeName(record.domain));
  // Decided against the record as it is after the lookup, which may have taken seconds.
  const current = store.getDomainClaim(record.domain, record.siteId);
  if (!current || current.claim !== record.claim) return undefined;
  return store.updateDomain(record.domain, record.claim, checkOutcome(current, answer, now(), graceMs));
}

/** The audit-log kind of a claim's change of status, if it is one the log records. */
const TRANSITION_KINDS: Partial<Record<DomainRecord['status'], EventKind>> = {
  active: 'domain.verified',
  suspended: 'domain.suspended',
  failed: 'domain.failed',
};

/**
 * Records in the site's audit log a change of a claim's status made by a check: verified (active),
 * suspended or failed, with the status before and, for the last two, what the lookup found.
 */
export async function recordDomainTransition(
  deps: Pick<OperationsDeps, 'store' | 'log' | 'config'>,
  actor: EventActor,
  before: DomainRecord,
  after: DomainRecord,
  site?: Pick<SiteRecord, 'id' | 'name'>,
): Promise<void> {
  if (after.status === before.status) return;
  const kind = TRANSITION_KINDS[after.status];
  const of = site ?? deps.store.getSiteById(after.siteId);
  if (kind === undefined || of === undefined || ('state' in of && of.state === 'deleted')) return;
  await recordEvent(deps, actor, {
    kind,
    site: of,
    details: { domain: after.domain, from: before.status, ...(after.status !== 'active' && after.reason !== undefined ? { reason: after.reason } : {}) },
  });
}

export interface DomainCheckReport {
  checked: number;
  activated: number;
  failed: number;
  suspended: number;
}

export interface DomainCheckerOptions {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  now?: () => number;
  /** The TXT lookup (outbound's node:dns one, with `PLINTH_DNS_SERVERS`). */
  lookup: TxtLookup;
}

/** The sweeper's step: every due domain looked up, a few at a time. */
export function createDomainChecker(options: DomainCheckerOptions): () => Promise<DomainCheckReport> {
  const now = options.now ?? Date.now;
  const { lookup } = options;
  return async () => {
    const at = now();
    const due = options.store.listAllDomains().filter((record) => isCheckDue(record, at) && !isHeldElsewhere(options.store, record));
    const report: DomainCheckReport = { checked: 0, activated: 0, failed: 0, suspended: 0 };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length) {
        const record = due[next++]!;
        const updated = await checkDomain(options.store, lookup, record, now, options.config.domains.graceMs);
        report.checked++;
        if (!updated || updated.status === record.status) continue;
        if (updated.status === 'active') report.activated++;
        else if (updated.status === 'failed') report.failed++;
        else if (updated.status === 'suspended') report.suspended++;
        options.log.info({ domain: record.domain, from: record.status, to: updated.status }, 'domain.status_changed');
        // The site's audit log has it too, by Plinth itself.
        await recordDomainTransition(options, { kind: 'system' }, record, updated);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, due.length) }, worker));
    return report;
  };
}
