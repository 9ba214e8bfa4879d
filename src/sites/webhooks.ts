import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { WEBHOOK_REFUSED_ADDRESS } from '../outbound/index.js';
import { isWebhookEvent, WEBHOOK_EVENTS, webhookUrlShown } from '../rules/index.js';
import type { SiteRecord, WebhookDelivery, WebhookDisabledFor, WebhookRecord } from '../store/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { iso } from './views.js';

/** A site's webhooks (docs/webhooks.md): owners register, list and remove them, and read their deliveries. */

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  created_at: string;
  /** `disabled`: nothing more is sent (`disabled_for` says why). */
  state: 'active' | 'disabled';
  disabled_at?: string;
  /** `failures`: too many deliveries in a row given up on; `claim`: the site token registered it, and the site was claimed. */
  disabled_for?: WebhookDisabledFor;
  /** Deliveries given up on in a row. */
  failures: number;
}

export interface DeliveryView {
  /** The `webhook-id` header of every attempt. */
  id: string;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  next_attempt_at?: string;
  last_attempt_at?: string;
  last_status?: number;
  last_error?: string;
}

export interface WebhookOperations {
  /** Registers a webhook; the answer carries its secret, shown this once. */
  create(caller: Caller, name: string, input: { url: unknown; events: unknown }): Promise<WebhookView & { secret: string }>;
  list(caller: Caller, name: string): { webhooks: WebhookView[] };
  remove(caller: Caller, name: string, id: string): Promise<{ id: string; deleted: true }>;
  deliveries(caller: Caller, name: string, id: string): Promise<{ deliveries: DeliveryView[] }>;
}

/** Deliveries a listing shows at most, newest first. */
export const DELIVERIES_SHOWN = 100;

export function webhookView(hook: WebhookRecord): WebhookView {
  return {
    id: hook.id,
    url: hook.url,
    events: hook.events,
    created_at: iso(hook.createdAt),
    state: hook.disabledAt === undefined ? 'active' : 'disabled',
    ...(hook.disabledAt !== undefined ? { disabled_at: iso(hook.disabledAt), disabled_for: hook.disabledFor ?? 'failures' } : {}),
    failures: hook.failures,
  };
}

export function deliveryView(delivery: WebhookDelivery): DeliveryView {
  return {
    id: delivery.id,
    event: delivery.event,
    state: delivery.state,
    attempts: delivery.attempts,
    created_at: iso(delivery.createdAt),
    ...(delivery.state === 'pending' ? { next_attempt_at: iso(delivery.nextAt) } : {}),
    ...(delivery.lastAt !== undefined ? { last_attempt_at: iso(delivery.lastAt) } : {}),
    ...(delivery.lastStatus !== undefined ? { last_status: delivery.lastStatus } : {}),
    ...(delivery.lastError !== undefined ? { last_error: shownError(delivery.lastError) } : {}),
  };
}

/**
 * An attempt's error as the owner reads it. Attempts recorded before it was one error stored
 * which check refused the target (`refused address (not a public address)`): shown without it.
 */
function shownError(error: string): string {
  return error.startsWith(WEBHOOK_REFUSED_ADDRESS) ? WEBHOOK_REFUSED_ADDRESS : error;
}

/** The same words for every refused target: which check failed would tell what lies inside. */
export const WEBHOOK_TARGET_REFUSED =
  'The webhook URL is not one Plinth sends to: it must be an https URL without credentials whose host name resolves only to public addresses.';

export function webhookOperations(deps: OperationsDeps): WebhookOperations {
  const { store, config, log } = deps;

  /** Webhooks are the owners' (the site token's while unclaimed): their URLs may carry a receiver's secret. */
  const ownedSite = (caller: Caller, name: string): SiteRecord => {
    const { site, role } = resolveSite(store, caller, name, 'read', deps.now());
    if (role !== 'owner') {
      throw new ServiceError('forbidden', `Your role on ${site.name} is ${role}; only an owner can manage its webhooks.`, {
        agentMessage: `Ask an owner of ${site.name} to manage its webhooks, or to make you an owner.`,
      });
    }
    return site;
  };
  const webhookOf = (site: SiteRecord, id: string): WebhookRecord => {
    const hook = store.getWebhook(site.id, id);
    if (hook === undefined) {
      throw new ServiceError('not_found', `${site.name} has no webhook ${id}.`, {
        agentMessage: `List the webhooks with GET /v1/sites/${site.name}/webhooks.`,
      });
    }
    return hook;
  };

  return {
    async create(caller, name, input) {
      const site = ownedSite(caller, name);
      const events = parseEvents(input.events);
      if (typeof input.url !== 'string' || input.url.trim() === '') {
        throw new ServiceError('bad_request', 'The body needs "url", the https address to send events to.');
      }
      const url = input.url.trim();
      const refused = await deps.webhookTransport.check(url);
      if (refused !== undefined) {
        log.info({ site: site.name, reason: refused }, 'webhook.target_refused');
        throw new ServiceError('bad_request', WEBHOOK_TARGET_REFUSED, {
          agentMessage: 'Give an https URL of a public receiver (not an internal, private or loopback address).',
        });
      }
      const actor = actorOf(caller);
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const added = await store.addWebhook(
        { siteId: site.id, url, events, secret, createdBy: actor.kind === 'account' ? actor.email : actor.kind },
        config.webhooks.perSite,
      );
      if (added === 'full') {
        throw new ServiceError('limit', `${site.name} has ${config.webhooks.perSite} webhooks, as many as a site may have.`, {
          agentMessage: `Remove a webhook of ${site.name} (DELETE /v1/sites/${site.name}/webhooks/<id>) before adding another.`,
        });
      }
      await recordEvent(deps, actor, { kind: 'webhook.created', site, details: { webhook: added.id, url: webhookUrlShown(url), events: events.join(' ') } });
      return { ...webhookView(added), secret };
    },

    list(caller, name) {
      const site = ownedSite(caller, name);
      return { webhooks: store.listWebhooks(site.id).map(webhookView) };
    },

    async remove(caller, name, id) {
      const site = ownedSite(caller, name);
      const hook = webhookOf(site, id);
      await store.removeWebhook(site.id, hook.id);
      await recordEvent(deps, actorOf(caller), { kind: 'webhook.deleted', site, details: { webhook: hook.id, url: webhookUrlShown(hook.url) } });
      return { id: hook.id, deleted: true };
    },

    async deliveries(caller, name, id) {
      const site = ownedSite(caller, name);
      const hook = webhookOf(site, id);
      return { deliveries: (await store.deliveries.list(hook.id, DELIVERIES_SHOWN)).map(deliveryView) };
    },
  };
}

function parseEvents(raw: unknown): string[] {
  const valid = WEBHOOK_EVENTS.join(', ');
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((item): item is string => typeof item === 'string')) {
    throw new ServiceError('bad_request', `The body needs "events", a list of one or more of: ${valid}.`);
  }
  const unknown = raw.find((item) => !isWebhookEvent(item));
  if (unknown !== undefined) throw new ServiceError('bad_request', `"${unknown.slice(0, 60)}" is not an event webhooks receive; they are: ${valid}.`);
  return [...new Set(raw)];
}
