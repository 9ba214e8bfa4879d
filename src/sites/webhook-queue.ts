import { createHmac } from 'node:crypto';
import { siteUrl } from '../config.js';
import { isWebhookEvent, webhookHears } from '../rules/index.js';
import { newId, type EventRecord, type SiteRecord, type WebhookDelivery } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { iso } from './views.js';

/**
 * The body of a delivery, as Standard Webhooks describes it: `type`, `timestamp` (of the event)
 * and `data` (the site, who did it, and the event's facts).
 */
export function webhookPayload(deps: Pick<OperationsDeps, 'config'>, event: EventRecord, site: Pick<SiteRecord, 'name'>): string {
  const actor = event.actor.kind === 'account' ? event.actor.email : event.actor.kind;
  return JSON.stringify({
    type: event.kind,
    timestamp: iso(event.at),
    data: { site: { name: site.name, url: siteUrl(deps.config.publicUrls, site.name) }, actor, ...event.details },
  });
}

/** Queues a delivery of the event to each webhook of the site that hears its kind (`webhookHears`). */
export async function queueWebhookDeliveries(
  deps: Pick<OperationsDeps, 'store' | 'log' | 'config'>,
  event: EventRecord,
  site: Pick<SiteRecord, 'id' | 'name'>,
): Promise<void> {
  if (!isWebhookEvent(event.kind)) return;
  const { store, log } = deps;
  const hooks = store.listWebhooks(site.id).filter((hook) => webhookHears(hook, event.kind));
  if (hooks.length === 0) return;
  const payload = webhookPayload(deps, event, site);
  const deliveries: WebhookDelivery[] = hooks.map((hook) => ({
    id: newId('msg_'),
    webhookId: hook.id,
    siteId: site.id,
    event: event.kind,
    payload,
    createdAt: event.at,
    state: 'pending',
    attempts: 0,
    nextAt: event.at,
  }));
  try {
    await store.deliveries.enqueue(deliveries);
  } catch (err) {
    log.error({ err, kind: event.kind, site: site.name }, 'webhook.queue_failed');
  }
}

/**
 * The three Standard Webhooks headers of one attempt: the delivery's id (the same on every
 * attempt, so receivers drop repeats), the attempt's time in seconds, and `v1,` with the base64
 * HMAC-SHA256 of `id.timestamp.body` under the key the secret carries after `whsec_`.
 */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampS), 'webhook-signature': `v1,${signature}` };
}
