import type pg from 'pg';
import type { DeliveryQueue } from './delivery-queue.js';
import { BULK_QUERY_MS, timeBound } from './records-connections.js';
import type { RecordsLog } from './records-log.js';
import type { DeliveryState, WebhookDelivery } from './types.js';

/**
 * The webhook delivery queue of a cluster, in PostgreSQL (table `plinth_webhook_deliveries`,
 * records-schema.ts). Any node may record an event; every node takes due deliveries with
 * `FOR UPDATE SKIP LOCKED`, so two nodes never take the same one, and holds what it took for a
 * lease: a node that dies mid-attempt leaves the delivery to another once the lease runs out.
 */

interface Row {
  id: string;
  webhook_id: string;
  site_id: string;
  event: string;
  payload: string;
  created_at: string;
  state: DeliveryState;
  attempts: number;
  next_at: string;
  lease_until: string | null;
  last_at: string | null;
  last_status: number | null;
  last_error: string | null;
}

const fromRow = (row: Row): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  siteId: row.site_id,
  event: row.event,
  payload: row.payload,
  createdAt: Number(row.created_at),
  state: row.state,
  attempts: row.attempts,
  nextAt: Number(row.next_at),
  ...(row.lease_until !== null ? { leaseUntil: Number(row.lease_until) } : {}),
  ...(row.last_at !== null ? { lastAt: Number(row.last_at) } : {}),
  ...(row.last_status !== null ? { lastStatus: row.last_status } : {}),
  ...(row.last_error !== null ? { lastError: row.last_error } : {}),
});

export function postgresDeliveryQueue(records: Pick<RecordsLog, 'withClient'>): DeliveryQueue {
  const q = <T extends pg.QueryResultRow>(client: pg.PoolClient, text: string, values: unknown[]) => timeBound<T>(client, text, values, BULK_QUERY_MS);
  return {
    async enqueue(deliveries) {
      if (deliveries.length === 0) return;
      await records.withClient((client) =>
        q(
          client,
          `INSERT INTO plinth_webhook_deliveries (id, webhook_id, site_id, event, payload, created_at, state, attempts, next_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::int[], $9::bigint[])
           ON CONFLICT (id) DO NOTHING`,
          [
            deliveries.map((d) => d.id),
            deliveries.map((d) => d.webhookId),
            deliveries.map((d) => d.siteId),
            deliveries.map((d) => d.event),
            deliveries.map((d) => d.payload),
            deliveries.map((d) => d.createdAt),
            deliveries.map((d) => d.state),
            deliveries.map((d) => d.attempts),
            deliveries.map((d) => d.nextAt),
          ],
        ),
      );
    },
    claim({ at, limit, perSite, leaseMs }) {
      return records.withClient(async (client) => {
        await client.query('BEGIN');
        try {
          // Rows another node is taking right now are skipped, not waited for.
          const due = await q<Row>(
            client,
            `SELECT * FROM plinth_webhook_deliveries
             WHERE state = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
             ORDER BY next_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [at, Math.max(limit * 4, limit)],
          );
          const sites = [...new Set(due.rows.map((row) => row.site_id))];
          const held = new Map<string, number>();
          if (perSite > 0 && sites.length > 0) {
            const counts = await q<{ site_id: string; n: number }>(
              client,
              `SELECT site_id, count(*)::int AS n FROM plinth_webhook_deliveries
               WHERE state = 'pending' AND lease_until > $1 AND site_id = ANY($2::text[]) GROUP BY site_id`,
              [at, sites],
            );
            for (const row of counts.rows) held.set(row.site_id, row.n);
          }
          const taken: WebhookDelivery[] = [];
          for (const row of due.rows) {
            if (taken.length === limit) break;
            const inFlight = held.get(row.site_id) ?? 0;
            if (perSite > 0 && inFlight >= perSite) continue;
            held.set(row.site_id, inFlight + 1);
            taken.push({ ...fromRow(row), attempts: row.attempts + 1, leaseUntil: at + leaseMs });
          }
          if (taken.length > 0) {
            await q(client, 'UPDATE plinth_webhook_deliveries SET attempts = attempts + 1, lease_until = $2 WHERE id = ANY($1::text[])', [
              taken.map((d) => d.id),
              at + leaseMs,
            ]);
          }
          await client.query('COMMIT');
          return taken;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
    },
    async finish(id, outcome) {
      const state: DeliveryState = outcome.delivered ? 'delivered' : outcome.retryAt === undefined ? 'failed' : 'pending';
      const nextAt = !outcome.delivered && outcome.retryAt !== undefined ? outcome.retryAt : null;
      await records.withClient((client) =>
        q(
          client,
          `UPDATE plinth_webhook_deliveries SET state = $2, next_at = coalesce($3, next_at), lease_until = NULL,
             last_at = $4, last_status = $5, last_error = $6 WHERE id = $1`,
          [id, state, nextAt, outcome.at, outcome.status ?? null, outcome.delivered ? null : (outcome.error ?? null)],
        ),
      );
    },
    list(webhookId, limit) {
      return records.withClient(async (client) =>
        (
          await q<Row>(client, 'SELECT * FROM plinth_webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [webhookId, limit])
        ).rows.map(fromRow),
      );
    },
    prune(before) {
      return records.withClient(
        async (client) => (await q(client, "DELETE FROM plinth_webhook_deliveries WHERE state <> 'pending' AND created_at < $1", [before])).rowCount ?? 0,
      );
    },
  };
}
