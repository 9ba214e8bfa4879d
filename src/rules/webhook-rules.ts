/** The events a webhook may ask for (docs/webhooks.md). */
export const WEBHOOK_EVENTS = ['deploy.published', 'deploy.failed', 'site.rolled_back', 'site.claimed', 'site.expiring', 'site.deleted'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const isWebhookEvent = (kind: string): kind is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(kind);

/** A webhook's `createdBy` when a site token registered it (the audit log's name for that actor). */
export const SITE_TOKEN_CREATOR = 'site_token';

/**
 * Whether a webhook is sent an event of this kind: an active one, each kind it asked for. One that
 * its site's claim ended (it was the site token's, and the site token reaches nothing after the
 * claim) still hears that claim, recorded after it ended: its receiver learns why nothing follows.
 */
export function webhookHears(hook: { events: readonly string[]; disabledAt?: number; disabledFor?: string }, kind: string): boolean {
  if (!hook.events.includes(kind)) return false;
  return hook.disabledAt === undefined || (hook.disabledFor === 'claim' && kind === 'site.claimed');
}

/**
 * A webhook's URL as the audit log shows it: its origin only. The path and query often are the
 * receiver's credential (Slack's and Discord's incoming webhooks), and the log is read by every
 * member of the site, viewers included, while the webhooks themselves are the owners'.
 */
export function webhookUrlShown(url: unknown): string {
  if (typeof url !== 'string' || !URL.canParse(url)) return '';
  const { origin } = new URL(url);
  return origin === 'null' ? '' : origin;
}

/**
 * When a failed webhook delivery is tried again (docs/webhooks.md): about 5 s, 30 s, 2 min and
 * 10 min after the attempts before, then hourly, for as long as `retryForMs` after the event.
 * The schedule of Standard Webhooks senders (Svix's), shortened to a day.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000];
const HOURLY_MS = 3600_000;

/** The time of the next attempt after `attempts` failed ones, or undefined once retrying is over. */
export function nextWebhookAttempt(createdAt: number, attempts: number, failedAt: number, retryForMs: number): number | undefined {
  const delay = WEBHOOK_RETRY_DELAYS_MS[attempts - 1] ?? HOURLY_MS;
  const next = failedAt + delay;
  return next <= createdAt + retryForMs ? next : undefined;
}

/**
 * Whether an attempt's outcome is worth trying again: no answer (timeout, connection), a server
 * error, or a receiver asking to be called later (408, 429). Any other answer, a redirect
 * included (never followed), is the receiver's final word.
 */
export function isRetriableAttempt(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status >= 500 || status === 408 || status === 429;
}
