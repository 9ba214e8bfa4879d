import { newId } from './ids.js';
import { compact, prefixRange, type DomainClaimKey, type MetadataDbs } from './metadata-dbs.js';
import type { DomainRecord, SiteRecord } from './types.js';

/**
 * Custom domains. Each site's claim on a domain is a record of its own, keyed `[domain, siteId]`,
 * so several sites may wait on one domain at once (pending or failed, each with its own TXT
 * value) and none can push another's claim out. A domain is held by at most one claim: the one
 * that is active or suspended on a site that is not deleted. While a claim holds it, no other
 * site may add the domain or have its claim become active; the first claim verified wins. Both
 * are decided inside one write transaction, which in a cluster runs under PostgreSQL's write
 * lock, so two sites verified at once on two nodes still end with one holder. `siteDomains`
 * lists a site's claims with one range scan. Every change also stamps the owning site's record
 * (`domainsChangedAt`), so the site change feed (this process's threads, and every node of a
 * cluster through the change log) tells serving caches to forget what they knew.
 */
export interface DomainRecords {
  /**
   * The claim serving reads for a domain (lower-case ASCII, no trailing dot): the one that holds
   * it; else an active or suspended claim of a deleted site (its domain answers as the site does,
   * 410); else the newest claim, whatever its status.
   */
  getDomain(domain: string): DomainRecord | undefined;
  /** The claim that holds the domain (active or suspended, on a site that is not deleted), if one does. */
  getDomainHolder(domain: string): DomainRecord | undefined;
  /** One site's claim on a domain, whatever its status. */
  getDomainClaim(domain: string, siteId: string): DomainRecord | undefined;
  /** A site's domains in domain order. */
  listDomains(siteId: string): DomainRecord[];
  /** Every claim of every domain, for the periodic checks. */
  listAllDomains(): DomainRecord[];
  /**
   * Attaches a domain to a site, pending verification. A domain whose claim by another site holds
   * it is `taken`; other sites' pending or failed claims stay as they are, beside this one. The
   * site's own `failed` claim starts over (a new claim); any other of its own is `exists`.
   * Counted inside the transaction: a site at `maxPerSite` domains gets `over_limit`.
   */
  addDomain(input: NewDomain): Promise<AddDomainResult>;
  /**
   * Changes a claim's status fields, only if it is still the same claim (`claim`): a check that
   * finished after the domain was removed, or removed and added again, changes nothing
   * (undefined). A claim cannot become active while another site's claim holds the domain: it
   * keeps its status and records only when it was checked. One that becomes active removes the
   * active or suspended claims of deleted sites, so a domain never has two.
   */
  updateDomain(domain: string, claim: string, patch: DomainPatch): Promise<DomainRecord | undefined>;
  /**
   * Marks one domain of a site primary (the others not), with whether the site's own address
   * redirects to it; `primary: false` unmarks it. Undefined when the site has no such domain.
   */
  setPrimaryDomain(siteId: string, domain: string, primary: boolean, redirectSite: boolean): Promise<DomainRecord | undefined>;
  /** Detaches a domain from a site (its claim only); false if the site has no such domain. */
  removeDomain(siteId: string, domain: string): Promise<boolean>;
  /**
   * Moves claims stored in the former layout (one record per domain) to the current one; the
   * store does it when it opens. Returns how many it moved.
   */
  liftLegacyDomains(): Promise<number>;
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

/** Longer than any domain: never a key (LMDB refuses keys this long, and any Host header may come here). */
const MAX_DOMAIN_LENGTH = 253;

const isHolding = (record: DomainRecord): boolean => record.status === 'active' || record.status === 'suspended';

export function domainOps(dbs: MetadataDbs, now: () => number, announce: (site: SiteRecord | undefined) => void): DomainRecords {
  /** Every site's claim on a domain. Read whole before any write (no cursor stays open in a write). */
  const claimsOf = (domain: string): DomainRecord[] => {
    if (domain === '' || domain.length > MAX_DOMAIN_LENGTH) return [];
    // Keys under `[domain]`: a longer domain sorts past the end (its next byte is above 0x00).
    const found = Array.from(dbs.domainClaims.getRange({ start: [domain], end: [domain, '\uffff'] }), ({ value }) => value);
    return found.filter((record) => record.domain === domain);
  };
  const isLiveSite = (siteId: string): boolean => {
    const site = dbs.sites.get(siteId);
    return site !== undefined && site.state !== 'deleted';
  };
  const holderOf = (claims: readonly DomainRecord[]): DomainRecord | undefined => claims.find((record) => isHolding(record) && isLiveSite(record.siteId));
  const servedOf = (claims: readonly DomainRecord[]): DomainRecord | undefined => {
    const holder = holderOf(claims);
    if (holder) return holder;
    const dead = claims.find(isHolding);
    if (dead) return dead;
    let newest: DomainRecord | undefined;
    for (const record of claims) if (newest === undefined || record.createdAt > newest.createdAt) newest = record;
    return newest;
  };
  const claimKey = (domain: string, siteId: string): DomainClaimKey => [domain, siteId];
  const listOf = (siteId: string): DomainRecord[] => {
    const range = prefixRange(siteId);
    if (!range) return [];
    const keys = Array.from(dbs.siteDomains.getKeys(range));
    const found: DomainRecord[] = [];
    for (const key of keys) {
      const record = dbs.domainClaims.get(claimKey(key[1], siteId));
      if (record) found.push(record);
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
    getDomain: (domain) => servedOf(claimsOf(domain)),
    getDomainHolder: (domain) => holderOf(claimsOf(domain)),
    getDomainClaim: (domain, siteId) => (domain === '' || domain.length > MAX_DOMAIN_LENGTH ? undefined : dbs.domainClaims.get(claimKey(domain, siteId))),
    listDomains: listOf,
    listAllDomains: () => Array.from(dbs.domainClaims.getRange({ snapshot: false }), ({ value }) => value),

    async addDomain(input) {
      return after(
        await dbs.transact(() => {
          const at = now();
          const site = dbs.sites.get(input.siteId);
          if (!site || site.state === 'deleted') return { result: { ok: false, reason: 'not_found' } as AddDomainResult, touched: [] };
          const claims = claimsOf(input.domain);
          const own = claims.find((record) => record.siteId === input.siteId);
          // A failed claim added again starts over: a new claim with a fresh week.
          if (own && own.status !== 'failed') return { result: { ok: false, reason: 'exists', record: own } as AddDomainResult, touched: [] };
          const holder = holderOf(claims);
          if (holder && holder.siteId !== input.siteId) return { result: { ok: false, reason: 'taken' } as AddDomainResult, touched: [] };
          const counted = listOf(input.siteId).length - (own ? 1 : 0);
          if (counted >= input.maxPerSite) return { result: { ok: false, reason: 'over_limit' } as AddDomainResult, touched: [] };
          const record: DomainRecord = {
            domain: input.domain,
            siteId: input.siteId,
            claim: newId('dom_'),
            status: 'pending',
            token: input.token,
            primary: false,
            createdAt: at,
          };
          void dbs.domainClaims.put(claimKey(input.domain, input.siteId), record);
          void dbs.siteDomains.put([input.siteId, input.domain], 1);
          const stamped = touch(input.siteId, at);
          return { result: { ok: true, record } as AddDomainResult, touched: stamped ? [stamped] : [] };
        }),
      );
    },

    async updateDomain(domain, claim, patch) {
      return after(
        await dbs.transact(() => {
          const claims = claimsOf(domain);
          const held = claims.find((record) => record.claim === claim);
          if (!held) return { result: undefined, touched: [] };
          const at = now();
          const holder = holderOf(claims);
          const others = claims.filter((record) => record !== held);
          if (patch.status === 'active' && holder !== undefined && holder !== held) {
            // Another site's claim was verified first: this one waits, whatever its record says.
            const checked = compact({ ...held, checkedAt: patch.checkedAt ?? held.checkedAt });
            void dbs.domainClaims.put(claimKey(domain, held.siteId), checked);
            return { result: checked, touched: [] };
          }
          const updated = compact({ ...held, ...patch });
          void dbs.domainClaims.put(claimKey(domain, held.siteId), updated);
          const touched: SiteRecord[] = [];
          if (updated.status === 'active') {
            // A deleted site's claim that was active lets go of the domain for good.
            for (const record of others.filter(isHolding)) {
              void dbs.domainClaims.remove(claimKey(domain, record.siteId));
              void dbs.siteDomains.remove([record.siteId, domain]);
              const former = touch(record.siteId, at);
              if (former) touched.push(former);
            }
          }
          // Only a change of what is served (the status) concerns serving caches.
          if (held.status !== updated.status) {
            const stamped = touch(held.siteId, at);
            if (stamped) touched.push(stamped);
          }
          return { result: updated, touched };
        }),
      );
    },

    async setPrimaryDomain(siteId, domain, primary, redirectSite) {
      return after(
        await dbs.transact(() => {
          const target = dbs.domainClaims.get(claimKey(domain, siteId));
          if (!target) return { result: undefined, touched: [] };
          let result: DomainRecord | undefined;
          for (const record of listOf(siteId)) {
            const isTarget = record.domain === domain;
            const updated = compact({
              ...record,
              primary: isTarget ? primary : primary ? false : record.primary,
              redirectSite: isTarget && primary && redirectSite ? true : primary || isTarget ? undefined : record.redirectSite,
            });
            void dbs.domainClaims.put(claimKey(record.domain, siteId), updated);
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
          if (!dbs.domainClaims.get(claimKey(domain, siteId))) return { result: false, touched: [] };
          void dbs.domainClaims.remove(claimKey(domain, siteId));
          void dbs.siteDomains.remove([siteId, domain]);
          const stamped = touch(siteId, now());
          return { result: true, touched: stamped ? [stamped] : [] };
        }),
      );
    },

    async liftLegacyDomains() {
      if (!hasLegacyDomains(dbs)) return 0;
      return dbs.transact(() => liftLegacyDomains(dbs));
    },
  };
}

/** Whether any claim is still stored in the former layout. */
export function hasLegacyDomains(dbs: Pick<MetadataDbs, 'domains'>): boolean {
  for (const _key of dbs.domains.getKeys({ limit: 1 })) return true;
  return false;
}

/**
 * Moves every claim of the former layout (`domains`: domain → the one claim it could have) to
 * `domainClaims`, inside the caller's write transaction; a claim already there under the new
 * key is kept. Idempotent, so every thread and node that opens the store may run it: whichever
 * comes first moves the records, the others find none. Returns how many it moved.
 */
export function liftLegacyDomains(dbs: Pick<MetadataDbs, 'domains' | 'domainClaims'>): number {
  const legacy = Array.from(dbs.domains.getRange(), ({ key, value }) => ({ key, value }));
  for (const { key, value } of legacy) {
    const claimKey: DomainClaimKey = [value.domain, value.siteId];
    if (dbs.domainClaims.get(claimKey) === undefined) void dbs.domainClaims.put(claimKey, value);
    void dbs.domains.remove(key);
  }
  return legacy.length;
}
