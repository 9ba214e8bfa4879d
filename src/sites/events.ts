import { eventReachMs, webhookUrlShown } from '../rules/index.js';
import {
  accountScope,
  siteScope,
  type AccountRecord,
  type EventActor,
  type EventDetails,
  type EventPosition,
  type EventRecord,
  type NewEvent,
  type SiteRecord,
} from '../store/index.js';
import { requireAccount, resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { decodeCursor, encodeCursor, pageLimit, type PageRequest } from './paging.js';
import { iso } from './views.js';
import { queueWebhookDeliveries } from './webhook-queue.js';

/**
 * The audit log (docs/audit-log.md). Every operation that changes a site or an account calls
 * `recordEvent` once it went through, with who did it; the log is read per site (members) and
 * per account (its own changes and those it made to sites), newest first.
 */

/** Every kind of event the log records, as it names them. */
export const EVENT_KINDS = [
  'deploy.published',
  'deploy.draft',
  'deploy.failed',
  'site.rolled_back',
  'revision.promoted',
  'revision.deleted',
  'access.changed',
  'member.invited',
  'invite.revoked',
  'member.joined',
  'member.removed',
  'member.role_changed',
  'site.renamed',
  'domain.added',
  'domain.changed',
  'domain.removed',
  'domain.verified',
  'domain.suspended',
  'domain.failed',
  'site.claim_link_renewed',
  'site.claimed',
  'site.expiring',
  'site.deletion_requested',
  'site.deleted',
  'site.taken_down',
  'site.restored',
  'webhook.created',
  'webhook.deleted',
  'webhook.disabled',
  'token.created',
  'token.revoked',
  'device.approved',
  'account.signed_in',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

/** One item of `GET /v1/sites/:name/events` and `GET /v1/me/events`. */
export interface EventView {
  kind: string;
  at: string;
  /** An e-mail address, `site_token`, `anonymous` or `operator`. */
  actor: string;
  site?: string;
  details: EventDetails;
}

export interface EventList {
  events: EventView[];
  next_cursor: string | null;
}

export interface EventOperations {
  /** A site's events, newest first (its members, and its site token while unclaimed). */
  forSite(caller: Caller, name: string, page?: PageRequest): EventList;
  /** The caller's account's events: its own changes, and those it made to sites. */
  forAccount(caller: Caller, page?: PageRequest): EventList;
}

/** Who a caller is, as the log records them; `network` only for someone without a credential. */
export function actorOf(caller: Caller, network?: string): EventActor {
  if (caller.kind === 'account') return accountActor(caller.account);
  if (caller.kind === 'site_token') return { kind: 'site_token' };
  return network === undefined ? { kind: 'anonymous' } : { kind: 'anonymous', network };
}

/** The account itself as the actor, for a change it made without a caller of its own (a device's token, issued at its poll). */
export function accountActor(account: Pick<AccountRecord, 'id' | 'email'>): EventActor {
  return { kind: 'account', email: account.email, accountId: account.id };
}

export interface EventInput {
  kind: EventKind;
  /** The site it concerns (as it is after the change). */
  site?: Pick<SiteRecord, 'id' | 'name'>;
  /** The account it concerns, when that is not the actor's (or there is no site). */
  accountId?: string;
  details?: EventDetails;
}

/**
 * Records an event of a change that went through, and queues it for the site's webhooks. The
 * change is made already: a log that cannot be written is reported in the server's log, never to
 * the caller as though the change had failed.
 */
export async function recordEvent(deps: Pick<OperationsDeps, 'store' | 'log' | 'config'>, actor: EventActor, input: EventInput): Promise<void> {
  const { store, log } = deps;
  let event: EventRecord;
  try {
    event = await store.recordEvent(newEvent(actor, input));
  } catch (err) {
    log.error({ err, kind: input.kind, site: input.site?.name }, 'audit.record_failed');
    return;
  }
  await eventRecorded(deps, event, input.site);
}

/** The record of an event, for `recordEvent` or for a change's own transaction (`CommitInput.event`). */
export function newEvent(actor: EventActor, input: EventInput): NewEvent {
  return {
    kind: input.kind,
    actor,
    ...(input.site ? { siteId: input.site.id, siteName: input.site.name } : {}),
    ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
    details: input.details ?? {},
  };
}

/** What follows an event once it is recorded: it is queued for the site's webhooks. */
export async function eventRecorded(deps: Pick<OperationsDeps, 'store' | 'log' | 'config'>, event: EventRecord, site: EventInput['site']): Promise<void> {
  if (site) await queueWebhookDeliveries(deps, event, site);
}

export function eventView(event: EventRecord): EventView {
  const actor = event.actor.kind === 'account' ? event.actor.email : event.actor.kind;
  let details: EventDetails =
    event.actor.kind === 'anonymous' && event.actor.network !== undefined ? { ...event.details, network: event.actor.network } : event.details;
  // Entries recorded before webhook URLs were cut to their origin are shown cut as well.
  if (event.kind.startsWith('webhook.') && typeof details.url === 'string') details = { ...details, url: webhookUrlShown(details.url) };
  return { kind: event.kind, at: iso(event.at), actor, ...(event.siteName !== undefined ? { site: event.siteName } : {}), details };
}

export function eventOperations(deps: OperationsDeps): EventOperations {
  const { store } = deps;
  const page = (scope: string, reachMs: number, request: PageRequest = {}): EventList => {
    const limit = pageLimit(request.limit);
    const position = decodeCursor(request.cursor, (text) => /^\d{1,16}\.\d{1,9}$/.test(text));
    const before: EventPosition | undefined =
      position === undefined ? undefined : { at: Number(position.slice(0, position.indexOf('.'))), n: Number(position.slice(position.indexOf('.') + 1)) };
    const { events, more } = store.listEvents(scope, { before, limit });
    // What the sweeper has not pruned yet but lies past the plan's reach is not shown.
    const oldest = deps.now() - reachMs;
    const shown = events.filter((event) => event.at >= oldest);
    const last = shown.at(-1);
    return {
      events: shown.map(eventView),
      next_cursor: more && last && shown.length === events.length ? encodeCursor(`${last.position.at}.${last.position.n}`) : null,
    };
  };
  return {
    forSite(caller, name, request) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      return page(siteScope(site.id), eventReachMs(site.plan), request);
    },
    forAccount(caller, request) {
      const account = requireAccount(caller, 'The account log');
      return page(accountScope(account.id), eventReachMs(account.plan), request);
    },
  };
}
