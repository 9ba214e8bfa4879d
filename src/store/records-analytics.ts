import type pg from 'pg';
import { newSalt, type AnalyticsDayRecord, type AnalyticsRecords } from './analytics.js';
import { BULK_QUERY_MS, rollback, timeBound } from './records-connections.js';

/**
 * Site analytics in a cluster: PostgreSQL's tables (records-schema.ts), to which every node adds
 * its flushes, so a day's counts are the sum over the nodes. Visitor hashes are inserted once
 * whichever node saw the visitor first; only an insert that added a row counts a new visitor.
 * Each site's day is worked on under its row's lock, taken first, so two nodes flushing the same
 * site wait on each other in one order and never deadlock.
 */
export function clusterAnalytics(withClient: <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>): AnalyticsRecords {
  return {
    analyticsSalt: (day) =>
      withClient(async (client) => {
        await client.query('INSERT INTO plinth_analytics_salts (day, salt) VALUES ($1, $2) ON CONFLICT DO NOTHING', [day, newSalt()]);
        return (await client.query<{ salt: string }>('SELECT salt FROM plinth_analytics_salts WHERE day = $1', [day])).rows[0]!.salt;
      }),

    addVisits: (visits, maxItemsPerDay) =>
      withClient(async (client) => {
        const ordered = [...visits].sort((a, b) => (a.siteId === b.siteId ? (a.day < b.day ? -1 : 1) : a.siteId < b.siteId ? -1 : 1));
        await client.query('BEGIN');
        try {
          for (const visit of ordered) {
            const key = [visit.siteId, visit.day];
            await client.query(
              `INSERT INTO plinth_analytics_days AS d (site_id, day, page_views, crawler_views, not_found, bytes, visitors) VALUES ($1, $2, $3, $4, $5, $6, 0)
               ON CONFLICT (site_id, day) DO UPDATE SET page_views = d.page_views + $3, crawler_views = d.crawler_views + $4, not_found = d.not_found + $5, bytes = d.bytes + $6`,
              [...key, visit.pageViews, visit.crawlerViews, visit.notFound, visit.bytes],
            );
            if (visit.visitors.length > 0) {
              const added = await client.query(
                'INSERT INTO plinth_analytics_visitors (site_id, day, hash) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING',
                [...key, visit.visitors],
              );
              if ((added.rowCount ?? 0) > 0) {
                await client.query('UPDATE plinth_analytics_days SET visitors = visitors + $3 WHERE site_id = $1 AND day = $2', [...key, added.rowCount]);
              }
            }
            for (const [kind, list] of [
              ['page', visit.pages],
              ['referrer', visit.referrers],
            ] as const) {
              if (list.length === 0) continue;
              const items = list.map(([item]) => item);
              const counts = list.map(([, count]) => count);
              // Items the day has already are added to; new ones only while there is room.
              const updated = await client.query<{ item: string }>(
                `UPDATE plinth_analytics_items AS i SET count = i.count + u.count FROM unnest($4::text[], $5::bigint[]) AS u(item, count)
                 WHERE i.site_id = $1 AND i.day = $2 AND i.kind = $3 AND i.item = u.item RETURNING i.item`,
                [...key, kind, items, counts],
              );
              const had = new Set(updated.rows.map((row) => row.item));
              const fresh = list.filter(([item]) => !had.has(item));
              if (fresh.length === 0) continue;
              let room = fresh.length;
              if (maxItemsPerDay > 0) {
                const held = (
                  await client.query<{ n: string }>('SELECT count(*) AS n FROM plinth_analytics_items WHERE site_id = $1 AND day = $2 AND kind = $3', [
                    ...key,
                    kind,
                  ])
                ).rows[0]!.n;
                room = Math.max(0, Math.min(fresh.length, maxItemsPerDay - Number(held)));
              }
              if (room === 0) continue;
              const kept = fresh.slice(0, room);
              await client.query(
                `INSERT INTO plinth_analytics_items AS i (site_id, day, kind, item, count) SELECT $1, $2, $3, u.item, u.count FROM unnest($4::text[], $5::bigint[]) AS u(item, count)
                 ON CONFLICT (site_id, day, kind, item) DO UPDATE SET count = i.count + excluded.count`,
                [...key, kind, kept.map(([item]) => item), kept.map(([, count]) => count)],
              );
            }
          }
          await client.query('COMMIT');
        } catch (err) {
          await rollback(client, err);
          throw err;
        }
      }),

    readAnalytics: (siteId, from, to) =>
      withClient(async (client) => {
        const days = new Map<string, AnalyticsDayRecord>();
        const found = await client.query<{ day: string; page_views: string; crawler_views: string; not_found: string; bytes: string; visitors: string }>(
          'SELECT day, page_views, crawler_views, not_found, bytes, visitors FROM plinth_analytics_days WHERE site_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day',
          [siteId, from, to],
        );
        for (const row of found.rows) {
          days.set(row.day, {
            day: row.day,
            pageViews: Number(row.page_views),
            crawlerViews: Number(row.crawler_views),
            notFound: Number(row.not_found),
            bytes: Number(row.bytes),
            visitors: Number(row.visitors),
            pages: [],
            referrers: [],
          });
        }
        const items = await client.query<{ day: string; kind: string; item: string; count: string }>(
          'SELECT day, kind, item, count FROM plinth_analytics_items WHERE site_id = $1 AND day BETWEEN $2 AND $3',
          [siteId, from, to],
        );
        for (const row of items.rows) {
          const day = days.get(row.day);
          if (day !== undefined) (row.kind === 'page' ? day.pages : day.referrers).push([row.item, Number(row.count)]);
        }
        return [...days.values()];
      }),

    pruneAnalytics: (siteId, beforeDay) =>
      withClient(async (client) => {
        await timeBound(client, 'DELETE FROM plinth_analytics_items WHERE site_id = $1 AND day < $2', [siteId, beforeDay], BULK_QUERY_MS);
        return (await timeBound(client, 'DELETE FROM plinth_analytics_days WHERE site_id = $1 AND day < $2', [siteId, beforeDay], BULK_QUERY_MS)).rowCount ?? 0;
      }),

    forgetVisitors: (beforeDay) =>
      withClient(async (client) => {
        await timeBound(client, 'DELETE FROM plinth_analytics_salts WHERE day < $1', [beforeDay], BULK_QUERY_MS);
        return (await timeBound(client, 'DELETE FROM plinth_analytics_visitors WHERE day < $1', [beforeDay], BULK_QUERY_MS)).rowCount ?? 0;
      }),
  };
}
