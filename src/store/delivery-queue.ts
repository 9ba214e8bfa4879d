import type { MetadataDbs } from './metadata-dbs.js';
import type { DeliveryOutcome, WebhookDelivery } from './types.js';

/**
 * Webhook deliveries waiting, in progress, delivered or given up (docs/webhooks.md). Embedded,
 * this machine's own LMDB table; in a cluster, a PostgreSQL table that every node takes work
 * from with `FOR UPDATE SKIP LOCKED` (delivery-queue-pg.ts), so each delivery is attempted by
 * one node at a time whichever node recorded its event.
 */
export interface DeliveryQueue {
  enqueue(deliveries: readonly WebhookDelivery[]): Promise<void>;
  /**
   * Takes up to `limit` deliveries due at `at` that no attempt holds, at most `perSite` in
   * progress per site counting those already held, and holds each until `at + leaseMs`: an
   * attempt whose node dies is taken up again once its hold runs out, with the same id.
   */
  claim(options: { at: number; limit: number; perSite: number; leaseMs: number }): Promise<WebhookDelivery[]>;
  /** Records an attempt's outcome and releases the hold. */
  finish(id: string, outcome: DeliveryOutcome): Promise<void>;
  /** A webhook's deliveries, newest first. */
  list(webhookId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Drops delivered and given-up deliveries older than `before`; returns how many went. */
  prune(before: number): Promise<number>;
}

/** The queue in this machine's LMDB (not replicated: embedded installs have one machine). */
export function localDeliveryQueue(dbs: MetadataDbs): DeliveryQueue {
  // The table is this machine's own: its writes never go through the cluster's log.
  const transact = <T>(fn: () => T): Promise<T> => dbs.env.transaction(fn);
  return {
    async enqueue(deliveries) {
      if (deliveries.length === 0) return;
      await transact(() => {
        for (const delivery of deliveries) void dbs.deliveries.put(delivery.id, delivery);
      });
    },
    async claim({ at, limit, perSite, leaseMs }) {
      // Polled every second: a read finds whether anything is due before a write transaction is opened.
      let anyDue = false;
      for (const { value } of dbs.deliveries.getRange({ snapshot: false })) {
        if (value.state === 'pending' && value.nextAt <= at && (value.leaseUntil === undefined || value.leaseUntil <= at)) {
          anyDue = true;
          break;
        }
      }
      if (!anyDue) return [];
      return transact(() => {
        const held = new Map<string, number>();
        const due: WebhookDelivery[] = [];
        for (const { value } of dbs.deliveries.getRange({ snapshot: false })) {
          if (value.state !== 'pending') continue;
          if (value.leaseUntil !== undefined && value.leaseUntil > at) held.set(value.siteId, (held.get(value.siteId) ?? 0) + 1);
          else if (value.nextAt <= at) due.push(value);
        }
        due.sort((a, b) => a.nextAt - b.nextAt);
        const taken: WebhookDelivery[] = [];
        for (const delivery of due) {
          if (taken.length === limit) break;
          const inFlight = held.get(delivery.siteId) ?? 0;
          if (perSite > 0 && inFlight >= perSite) continue;
          held.set(delivery.siteId, inFlight + 1);
          const claimed: WebhookDelivery = { ...delivery, attempts: delivery.attempts + 1, leaseUntil: at + leaseMs };
          void dbs.deliveries.put(claimed.id, claimed);
          taken.push(claimed);
        }
        return taken;
      });
    },
    async finish(id, outcome) {
      await transact(() => {
        const delivery = dbs.deliveries.get(id);
        if (delivery === undefined) return;
        void dbs.deliveries.put(id, finished(delivery, outcome));
      });
    },
    async list(webhookId, limit) {
      const found: WebhookDelivery[] = [];
      for (const { value } of dbs.deliveries.getRange({ snapshot: false })) if (value.webhookId === webhookId) found.push(value);
      return found.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).slice(0, limit);
    },
    prune(before) {
      return transact(() => {
        let removed = 0;
        for (const { key, value } of dbs.deliveries.getRange({ snapshot: false })) {
          if (value.state !== 'pending' && value.createdAt < before) {
            void dbs.deliveries.remove(key);
            removed++;
          }
        }
        return removed;
      });
    },
  };
}

/** A delivery after an attempt: delivered, waiting for its next attempt, or given up. */
export function finished(delivery: WebhookDelivery, outcome: DeliveryOutcome): WebhookDelivery {
  const { leaseUntil: _released, lastStatus: _status, lastError: _error, ...rest } = delivery;
  const last = {
    lastAt: outcome.at,
    ...(outcome.status !== undefined ? { lastStatus: outcome.status } : {}),
    ...(!outcome.delivered && outcome.error !== undefined ? { lastError: outcome.error } : {}),
  };
  if (outcome.delivered) return { ...rest, ...last, state: 'delivered' };
  if (outcome.retryAt === undefined) return { ...rest, ...last, state: 'failed' };
  return { ...rest, ...last, state: 'pending', nextAt: outcome.retryAt };
}
