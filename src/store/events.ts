import { newId } from './ids.js';
import { isPlainId, type EventKey, type MetadataDbs } from './metadata-dbs.js';
import type { EventRecord, NewEvent } from './types.js';

/**
 * The audit log (docs/audit-log.md): what changed, when and by whom. An event is kept under its
 * site (`site:<id>`) and under the account that made it or that it is about (`account:<id>`), so
 * one reverse range scan lists either, newest first. Replicated like every record: any node reads
 * the whole log.
 */
export interface EventRecords {
  /** Records one event; its id and time are given here. */
  recordEvent(event: NewEvent): Promise<EventRecord>;
  /**
   * Events of a scope (`siteScope(id)`, `accountScope(id)`), newest first; `before` is the
   * `position` of the last event of the previous page (exclusive). One more than `limit` is never
   * returned: `more` says whether another page exists.
   */
  listEvents(scope: string, options: { before?: EventPosition; limit: number }): { events: Array<EventRecord & { position: EventPosition }>; more: boolean };
  /** Drops events older than their scope's cut-off (`cutoffOf` answers undefined: keep them all). Returns how many went. */
  pruneEvents(cutoffOf: (scope: string) => number | undefined): Promise<number>;
}

/** Where an event sits in its scope's listing, for paging: its time, and its place among events of the same millisecond. */
export interface EventPosition {
  at: number;
  n: number;
}

export const siteScope = (siteId: string): string => `site:${siteId}`;
export const accountScope = (accountId: string): string => `account:${accountId}`;

/** The scopes an event is listed under: its site's, and each account it concerns. */
function scopesOf(event: EventRecord): string[] {
  const scopes = new Set<string>();
  if (event.siteId !== undefined) scopes.add(siteScope(event.siteId));
  if (event.accountId !== undefined) scopes.add(accountScope(event.accountId));
  if (event.actor.accountId !== undefined) scopes.add(accountScope(event.actor.accountId));
  return [...scopes];
}

/** Writes a new event under each of its scopes, inside the caller's transaction; returns it with its id and time. */
export function putEvent(dbs: MetadataDbs, input: NewEvent, at: number): EventRecord {
  const event: EventRecord = { ...input, id: newId('evt_'), at };
  // Events of the same millisecond keep the order they were recorded in.
  for (const scope of scopesOf(event)) {
    let n = 0;
    for (const { key } of dbs.events.getRange({ start: [scope, event.at, Number.MAX_SAFE_INTEGER], end: [scope, event.at], reverse: true, limit: 1 }))
      n = key[2] + 1;
    void dbs.events.put([scope, event.at, n], event);
  }
  return event;
}

export function eventOps(dbs: MetadataDbs, now: () => number): EventRecords {
  return {
    recordEvent(input) {
      const at = now();
      return dbs.transact((): EventRecord => putEvent(dbs, input, at));
    },
    listEvents(scope, { before, limit }) {
      if (!isPlainId(scope)) return { events: [], more: false };
      const start: EventKey = before === undefined ? [scope, Number.MAX_SAFE_INTEGER, 0] : [scope, before.at, before.n];
      const events: Array<EventRecord & { position: EventPosition }> = [];
      for (const { key, value } of dbs.events.getRange({ start, end: [scope], reverse: true })) {
        if (before !== undefined && key[1] === before.at && key[2] === before.n) continue;
        if (events.length === limit) return { events, more: true };
        events.push({ ...value, position: { at: key[1], n: key[2] } });
      }
      return { events, more: false };
    },
    pruneEvents(cutoffOf) {
      return dbs.transact(() => {
        let removed = 0;
        for (const key of dbs.events.getKeys({ snapshot: false })) {
          const cutoff = cutoffOf(key[0]);
          if (cutoff !== undefined && key[1] < cutoff) {
            void dbs.events.remove(key);
            removed++;
          }
        }
        return removed;
      });
    },
  };
}
