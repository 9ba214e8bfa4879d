import { newId } from './ids.js';
import { compact, prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { DomainRecord, SiteRecord } from './types.js';

/**
 * Custom domains. A domain is one record, keyed by the domain itself, so it belongs to one site
 * at a time in the whole cluster (the key is unique in PostgreSQL as in LMDB); `siteDomains`
 * lists a site's domains with one range scan. Every change also stamps the owning site's record
 * (`domainsChangedAt`), so the site change feed (this process's threads, and every node of a
 * cluster through the change log) tells serving caches to forget what they knew.
 */
export interface DomainRecords {
  /** The record of a domain (lower-case ASCII, no trailing dot), whatever its status. */
  getDomain(domain: string): DomainRecord | undefined;
  /** A site's domains in domain order. */
  listDomains(siteId: string): DomainRecord[];
  /** Every domain record, for the periodic checks. */
  listAllDomains(): DomainRecord[];
  /**
   * Attaches a domain to a site, pending verification. A domain another site holds `active` or
   * `suspended` is `taken`; another site's `pending` or `failed` claim proved nothing and is
   * replaced, and so is the site's own `failed` one (it starts over); any other of its own is `exists`. Counted inside the transaction: a site at `maxPerSite` domains gets `over_limit`.
   */
  addDomain(input: NewDomain): Promise<AddDomainResult>;
  /**
   * Changes a domain's status fields, only if it is still the same claim (`claim`): a check that
   * finished after the domain was removed, or removed and added again, changes nothing (undefined).
   */
  updateDomain(domain: string, claim: string, patch: DomainPatch): Promise<DomainRecord | undefined>;
  /**
   * Marks one domain of a site primary (the others not), with whether the site's own address
   * redirects to it; `primary: false` unmarks it. Undefined when the site has no such domain.
   */
  setPrimaryDomain(siteId: string, domain: string, primary: boolean, redirectSite: boolean): Promise<DomainRecord | undefined>;
  /** Detaches a domain from a site; false if the site has no such domain. */
  removeDomain(siteId: string, domain: string): Promise<boolean>;
}

export interface NewDomain {
  domain: string;
  siteId: string;
  token: string;
  maxPerSite: number;
}

export type AddDomainResult =
  { ok: true; record: DomainRecord } | { ok: false; reason: 'exists'; record: DomainRecord } | { ok: false; reason: 'taken' | 'over_limit' | 'not_found' };

export type DomainPatch = Partial<Pick<DomainRecord, 'status' | 'reason' | 'verifiedAt' | 'checkedAt' | 'failingSince'>>;

export function domainOps(dbs: MetadataDbs, now: () => number, announce: (site: SiteRecord | undefined) => void): DomainRecords {
  const listOf = (siteId: string): DomainRecord[] => {
    const range = prefixRange(siteId);
    if (!range) return [];
    const found: DomainRecord[] = [];
    for (const { key } of dbs.siteDomains.getRange(range)) {
      const record = dbs.domains.get(key[1]);
      if (record && record.siteId === siteId) found.push(record);
    }
    return found;
  };
  /** Stamps the site inside the transaction; returns the stamped record to announce after it. */
  const touch = (siteId: string, at: number): SiteRecord | undefined => {
    const site = dbs.sites.get(siteId);
    if (!site) return undefined;
    const stamped = { ...site, domainsChangedAt: at };
    void dbs.sites.put(siteId, stamped);
    return stamped;
  };
  const after = <T>(outcome: { result: T; touched: SiteRecord[] }): T => {
    for (const site of outcome.touched) announce(site);
    return outcome.result;
  };

  return {
    // No domain is longer than 253 characters; a longer key (any Host header) would not even fit LMDB.
    getDomain: (domain) => (domain === '' || domain.length > 253 ? undefined : dbs.domains.get(domain)),
    listDomains: listOf,
    listAllDomains: () => Array.from(dbs.domains.getRange({ snapshot: false }), ({ value }) => value),

    async addDomain(input) {
      return after(
        await dbs.transact(() => {
          const at = now();
          const site = dbs.sites.get(input.siteId);
          if (!site || site.state === 'deleted') return { result: { ok: false, reason: 'not_found' } as AddDomainResult, touched: [] };
          const held = dbs.domains.get(input.domain);
          const touched: SiteRecord[] = [];
          if (held) {
            // A failed domain added again starts over: a new claim with a fresh week.
            if (held.siteId === input.siteId && held.status !== 'failed')
              return { result: { ok: false, reason: 'exists', record: held } as AddDomainResult, touched };
            const holder = dbs.sites.get(held.siteId);
            const holds = holder !== undefined && holder.state !== 'deleted' && (held.status === 'active' || held.status === 'suspended');
            if (holds) return { result: { ok: false, reason: 'taken' } as AddDomainResult, touched };
          }
          const counted = listOf(input.siteId).length - (held?.siteId === input.siteId ? 1 : 0);
          if (counted >= input.maxPerSite) return { result: { ok: false, reason: 'over_limit' } as AddDomainResult, touched };
          if (held && held.siteId !== input.siteId) {
            void dbs.siteDomains.remove([held.siteId, held.domain]);
            const former = touch(held.siteId, at);
            if (former) touched.push(former);
          }
          const record: DomainRecord = {
            domain: input.domain,
            siteId: input.siteId,
            claim: newId('dom_'),
            status: 'pending',
            token: input.token,
            primary: false,
            createdAt: at,
          };
          void dbs.domains.put(input.domain, record);
          void dbs.siteDomains.put([input.siteId, input.domain], 1);
          const stamped = touch(input.siteId, at);
          if (stamped) touched.push(stamped);
          return { result: { ok: true, record } as AddDomainResult, touched };
        }),
      );
    },

    async updateDomain(domain, claim, patch) {
      return after(
        await dbs.transact(() => {
          const held = dbs.domains.get(domain);
          if (!held || held.claim !== claim) return { result: undefined, touched: [] };
          const updated = compact({ ...held, ...patch });
          void dbs.domains.put(domain, updated);
          // Only a change of what is served (the status) concerns serving caches.
          const stamped = held.status !== updated.status ? touch(held.siteId, now()) : undefined;
          return { result: updated, touched: stamped ? [stamped] : [] };
        }),
      );
    },

    async setPrimaryDomain(siteId, domain, primary, redirectSite) {
      return after(
        await dbs.transact(() => {
          const target = dbs.domains.get(domain);
          if (!target || target.siteId !== siteId) return { result: undefined, touched: [] };
          let result: DomainRecord | undefined;
          for (const record of listOf(siteId)) {
            const isTarget = record.domain === domain;
            const updated = compact({
              ...record,
              primary: isTarget ? primary : primary ? false : record.primary,
              redirectSite: isTarget && primary && redirectSite ? true : primary || isTarget ? undefined : record.redirectSite,
            });
            void dbs.domains.put(record.domain, updated);
            if (isTarget) result = updated;
          }
          const stamped = touch(siteId, now());
          return { result, touched: stamped ? [stamped] : [] };
        }),
      );
    },

    async removeDomain(siteId, domain) {
      return after(
        await dbs.transact(() => {
          const held = dbs.domains.get(domain);
          if (!held || held.siteId !== siteId) return { result: false, touched: [] };
          void dbs.domains.remove(domain);
          void dbs.siteDomains.remove([siteId, domain]);
          const stamped = touch(siteId, now());
          return { result: true, touched: stamped ? [stamped] : [] };
        }),
      );
    },
  };
}
