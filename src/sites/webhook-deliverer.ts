import { WEBHOOK_REFUSED_ADDRESS } from '../outbound/index.js';
import { isExpired, isRetriableAttempt, nextWebhookAttempt, webhookHears, webhookUrlShown } from '../rules/index.js';
import { siteScope, type DeliveryOutcome, type WebhookDelivery } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { recordEvent } from './events.js';
import { iso } from './views.js';
import { signWebhook } from './webhook-queue.js';

/**
 * Sends queued webhook deliveries (docs/webhooks.md): one per node (the first HTTP thread) takes
 * due deliveries from the queue, a few per site at a time, signs each attempt, and records how it
 * went: delivered, tried again later on the retry schedule, or given up on. A webhook whose
 * deliveries are given up on too many times in a row is disabled, with an event in the site's
 * log. Once a minute it also records `site.expiring` for unclaimed sites a day from expiry.
 */

export interface WebhookDeliverer {
  /** Looks for due deliveries now rather than at the next poll. */
  wake(): void;
  /** Stops polling and waits for attempts in progress. */
  stop(): Promise<void>;
}

export interface WebhookDelivererOptions {
  /** How often the queue is looked at; default `config.webhooks.pollMs`. */
  pollMs?: number;
  /** How often unclaimed sites are checked for their expiry notice. */
  expiryCheckMs?: number;
}

const BATCH = 16;
/** An attempt holds its delivery this much longer than the receiver's deadline. */
const LEASE_MARGIN_MS = 5_000;
/** `site.expiring` is sent this long before an unclaimed site expires. */
export const EXPIRY_NOTICE_MS = 24 * 3600_000;

export function startWebhookDeliverer(
  deps: Pick<OperationsDeps, 'store' | 'log' | 'config' | 'now' | 'webhookTransport'>,
  options: WebhookDelivererOptions = {},
): WebhookDeliverer {
  const { store, log, config } = deps;
  const settings = config.webhooks;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let lastExpiryCheck = 0;

  const attempt = async (delivery: WebhookDelivery): Promise<void> => {
    const hook = store.getWebhook(delivery.siteId, delivery.webhookId);
    const at = (): number => deps.now();
    let outcome: DeliveryOutcome;
    let reason: string | undefined;
    if (hook === undefined || !webhookHears(hook, delivery.event)) {
      outcome = { delivered: false, error: hook === undefined ? 'webhook removed' : 'webhook disabled', at: at() };
    } else {
      const headers = signWebhook(hook.secret, delivery.id, Math.floor(at() / 1000), delivery.payload);
      const result = await deps.webhookTransport.send(hook.url, headers, delivery.payload);
      reason = result.reason;
      const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
      const failedAt = at();
      // An address refused at send time (the name now leads inside) is not tried again.
      const retryAt =
        delivered || result.error === WEBHOOK_REFUSED_ADDRESS || !isRetriableAttempt(result.status)
          ? undefined
          : nextWebhookAttempt(delivery.createdAt, delivery.attempts, failedAt, settings.retryForMs);
      outcome = delivered
        ? { delivered: true, status: result.status!, at: failedAt }
        : {
            delivered: false,
            ...(result.status !== undefined ? { status: result.status } : {}),
            ...(result.error !== undefined ? { error: result.error } : {}),
            at: failedAt,
            ...(retryAt !== undefined ? { retryAt } : {}),
          };
    }
    await store.deliveries.finish(delivery.id, outcome);
    log.info(
      {
        webhook: delivery.webhookId,
        delivery: delivery.id,
        attempt: delivery.attempts,
        status: outcome.status,
        delivered: outcome.delivered,
        // Which check refused the target: the operator's to read, not the owner's.
        ...(reason !== undefined ? { reason } : {}),
      },
      'webhook.attempt',
    );
    if (hook === undefined || hook.disabledAt !== undefined) return;
    const givenUp = !outcome.delivered && outcome.retryAt === undefined;
    if (!outcome.delivered && !givenUp) return;
    const noted = await store.noteDelivery(delivery.siteId, delivery.webhookId, givenUp, settings.disableAfter);
    if (noted.disabled) {
      const site = store.getSiteById(delivery.siteId);
      log.warn({ webhook: hook.id, site: site?.name, failures: noted.webhook?.failures }, 'webhook.disabled');
      if (site) {
        await recordEvent(
          deps,
          { kind: 'system' },
          {
            kind: 'webhook.disabled',
            site,
            details: { webhook: hook.id, url: webhookUrlShown(hook.url), reason: 'failures', failures: noted.webhook?.failures ?? settings.disableAfter },
          },
        );
      }
    }
  };

  /** `site.expiring`, once per unclaimed site, a day before it expires. */
  const noticeExpiring = async (): Promise<void> => {
    const now = deps.now();
    for (const siteId of store.listSiteIds()) {
      const site = store.getSiteById(siteId);
      if (!site || site.claimed || site.expiresAt === undefined || site.state !== 'active' || isExpired(site, now)) continue;
      if (site.expiresAt - EXPIRY_NOTICE_MS > now) continue;
      if (!store.listWebhooks(site.id).some((hook) => hook.disabledAt === undefined && hook.events.includes('site.expiring'))) continue;
      // The site's log says whether the notice went out already (an anonymous site's log is short).
      const { events } = store.listEvents(siteScope(site.id), { limit: 1000 });
      if (events.some((event) => event.kind === 'site.expiring')) continue;
      await recordEvent(deps, { kind: 'system' }, { kind: 'site.expiring', site, details: { expires_at: iso(site.expiresAt) } });
    }
  };

  const pass = async (): Promise<void> => {
    const now = deps.now();
    if (now - lastExpiryCheck >= (options.expiryCheckMs ?? 60_000)) {
      lastExpiryCheck = now;
      // In a cluster, one node at a time, so the notice is recorded once.
      await (store.cluster ? store.cluster.alone('webhook-expiry', noticeExpiring) : noticeExpiring());
    }
    for (;;) {
      if (stopped) return;
      const due = await store.deliveries.claim({
        at: deps.now(),
        limit: BATCH,
        perSite: settings.inFlightPerSite,
        leaseMs: settings.timeoutMs + LEASE_MARGIN_MS,
      });
      if (due.length === 0) return;
      await Promise.all(due.map((delivery) => attempt(delivery).catch((err: unknown) => log.error({ err, delivery: delivery.id }, 'webhook.attempt_failed'))));
    }
  };

  const wake = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => log.warn({ err }, 'webhook.pass_failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          wake();
        }
      });
  };
  const timer = setInterval(wake, options.pollMs ?? settings.pollMs);
  timer.unref();
  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
