import { compact, type MetadataDbs } from './metadata-dbs.js';
import type { AccessTicketRecord, PreviewAccessRecord, RevisionRecord, SiteAccessRecord, SiteRecord } from './types.js';

export type PromoteResult =
  | { ok: true; site: SiteRecord; revision: RevisionRecord }
  | { ok: false; reason: 'not_found' | 'no_revision' }
  | { ok: false; reason: 'conflict'; liveRevision?: string };

/** What `changeSiteAccess` sets: a field left out stays as it is; `null` clears it (public). */
export interface AccessChange {
  access?: SiteAccessRecord | null;
  previews?: PreviewAccessRecord | null;
}

/** Who may see a site, drafts going live, and the tickets of the members-only hop. */
export interface SiteAccessRecords {
  /** A site's revision by its number, or undefined; a deleted one is its tombstone (`deletedAt`). */
  getRevisionByNumber(siteId: string, number: number): RevisionRecord | undefined;
  /**
   * Sets or clears the site's access rule and the rule of its previews, in one transaction;
   * `not_found` for an unknown or deleted site.
   */
  changeSiteAccess(siteId: string, change: AccessChange): Promise<{ ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' }>;
  /**
   * Makes an existing revision of the site live, in one transaction, without copying it: the
   * live revision must still be `baseRevision` (else `conflict`, nothing changes). The revision
   * stops being a draft.
   */
  promoteRevision(siteId: string, revisionId: string, baseRevision: string): Promise<PromoteResult>;
  /**
   * A members-only ticket as this node's records have it, without using it up (a read, no
   * transaction): serving looks before it writes. Expired ones too, until they are swept.
   */
  findAccessTicket(ticketHash: string): AccessTicketRecord | undefined;
  /** Stores a members-only access ticket by the hash of its secret. */
  createAccessTicket(ticketHash: string, record: AccessTicketRecord): Promise<void>;
  /**
   * Uses a ticket up: removed in the same transaction that reads it, so of two requests with one
   * ticket, on any node of a cluster, exactly one gets it. Unknown, used or expired: undefined.
   */
  useAccessTicket(ticketHash: string): Promise<AccessTicketRecord | undefined>;
}

export function siteAccessOps(dbs: MetadataDbs, now: () => number, announce: (site: SiteRecord) => void): SiteAccessRecords {
  return {
    getRevisionByNumber: (siteId, number) => dbs.revisions.get([siteId, number]),

    async changeSiteAccess(siteId, change) {
      const result = await dbs.transact((): Awaited<ReturnType<SiteAccessRecords['changeSiteAccess']>> => {
        const site = dbs.sites.get(siteId);
        if (!site || site.state === 'deleted') return { ok: false, reason: 'not_found' };
        const updated: SiteRecord = { ...site };
        if (change.access === null) delete updated.access;
        // `previewLinks` belongs to serving's derived rule only, never to a stored one.
        else if (change.access !== undefined) updated.access = compact({ ...change.access, previewLinks: undefined });
        if (change.previews === null) delete updated.previews;
        else if (change.previews !== undefined) updated.previews = { mode: change.previews.mode, since: change.previews.since };
        void dbs.sites.put(site.id, updated);
        return { ok: true, site: updated };
      });
      if (result.ok) announce(result.site);
      return result;
    },

    async promoteRevision(siteId, revisionId, baseRevision) {
      const result = await dbs.transact((): PromoteResult => {
        const site = dbs.sites.get(siteId);
        if (!site || site.state === 'deleted') return { ok: false, reason: 'not_found' };
        if (site.liveRevision !== baseRevision) {
          return site.liveRevision === undefined ? { ok: false, reason: 'conflict' } : { ok: false, reason: 'conflict', liveRevision: site.liveRevision };
        }
        const key = dbs.revisionIds.get(revisionId);
        const revision = key === undefined ? undefined : dbs.revisions.get(key);
        if (!revision || revision.siteId !== site.id) return { ok: false, reason: 'no_revision' };
        const { draft: _draft, ...published } = revision;
        if (revision.draft) void dbs.revisions.put([site.id, revision.number], published);
        const updated: SiteRecord = { ...site, liveRevision: revision.id, liveNumber: revision.number };
        void dbs.sites.put(site.id, updated);
        return { ok: true, site: updated, revision: published };
      });
      if (result.ok) announce(result.site);
      return result;
    },

    findAccessTicket: (ticketHash) => dbs.accessTickets.get(ticketHash),

    async createAccessTicket(ticketHash, record) {
      await dbs.transact(() => void dbs.accessTickets.put(ticketHash, record));
    },
    useAccessTicket(ticketHash) {
      return dbs.transact((): AccessTicketRecord | undefined => {
        const ticket = dbs.accessTickets.get(ticketHash);
        if (ticket === undefined) return undefined;
        void dbs.accessTickets.remove(ticketHash);
        return ticket.expiresAt > now() ? ticket : undefined;
      });
    },
  };
}
