import { newId } from './ids.js';
import { prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { WebhookRecord } from './types.js';

/** Sites' webhooks (docs/webhooks.md): replicated records, read by any node. */
export interface WebhookRecords {
  /** Adds a webhook unless the site has `maxPerSite` already (`full`). */
  addWebhook(input: Omit<WebhookRecord, 'id' | 'createdAt' | 'failures'>, maxPerSite: number): Promise<WebhookRecord | 'full'>;
  /** A site's webhooks, oldest first. */
  listWebhooks(siteId: string): WebhookRecord[];
  getWebhook(siteId: string, webhookId: string): WebhookRecord | undefined;
  /** False if the site has no such webhook. */
  removeWebhook(siteId: string, webhookId: string): Promise<boolean>;
  /**
   * Counts a delivery that went through (the failures in a row start again) or one given up on;
   * at `disableAfter` given up in a row the webhook is disabled. Answers the record as it now is,
   * with `disabled: true` when this call disabled it.
   */
  noteDelivery(siteId: string, webhookId: string, givenUp: boolean, disableAfter: number): Promise<{ webhook?: WebhookRecord; disabled: boolean }>;
}

export function webhookOps(dbs: MetadataDbs, now: () => number): WebhookRecords {
  const list = (siteId: string): WebhookRecord[] => {
    const range = prefixRange(siteId);
    return range ? Array.from(dbs.webhooks.getRange(range), ({ value }) => value).sort((a, b) => a.createdAt - b.createdAt) : [];
  };
  return {
    addWebhook(input, maxPerSite) {
      const record: WebhookRecord = { ...input, id: newId('wh_'), createdAt: now(), failures: 0 };
      return dbs.transact((): WebhookRecord | 'full' => {
        // Counted inside the write transaction, so two racing requests cannot both pass the cap.
        if (maxPerSite > 0 && list(input.siteId).length >= maxPerSite) return 'full';
        void dbs.webhooks.put([record.siteId, record.id], record);
        return record;
      });
    },
    listWebhooks: list,
    getWebhook: (siteId, webhookId) => dbs.webhooks.get([siteId, webhookId]),
    removeWebhook(siteId, webhookId) {
      return dbs.transact(() => {
        if (dbs.webhooks.get([siteId, webhookId]) === undefined) return false;
        void dbs.webhooks.remove([siteId, webhookId]);
        return true;
      });
    },
    async noteDelivery(siteId, webhookId, givenUp, disableAfter) {
      const found = dbs.webhooks.get([siteId, webhookId]);
      // Most deliveries go through to a webhook with no failures: nothing to write then.
      if (found === undefined || (!givenUp && found.failures === 0)) return { webhook: found, disabled: false };
      return dbs.transact(() => {
        const webhook = dbs.webhooks.get([siteId, webhookId]);
        if (webhook === undefined) return { disabled: false };
        const failures = givenUp ? webhook.failures + 1 : 0;
        const disable = givenUp && webhook.disabledAt === undefined && disableAfter > 0 && failures >= disableAfter;
        const updated: WebhookRecord = { ...webhook, failures, ...(disable ? { disabledAt: now(), disabledFor: 'failures' as const } : {}) };
        void dbs.webhooks.put([siteId, webhookId], updated);
        return { webhook: updated, disabled: disable };
      });
    },
  };
}
