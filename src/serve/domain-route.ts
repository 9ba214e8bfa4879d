import { writeResponse, type HttpRequest, type HttpResponse } from '../http/index.js';
import { hostOfHeader, isAtOrUnder, isDnsLabel, parsePreviewLabel, wwwPartner, type ServiceHosts } from '../rules/index.js';
import type { Store } from '../store/index.js';
import { protectedHeaders } from './headers.js';
import { isServingSite, previewRevision } from './preview-revision.js';

/**
 * Custom domains on the serving side: which site a Host that is none of ours belongs to, the
 * apex ↔ www redirect to a primary domain, the site address's own redirect to it, and the TLS
 * terminator's question. Reads are synchronous against the local replica (as site lookups are)
 * and cached per thread; any site change forgets the cache, since every domain change stamps its
 * site (store/domains.ts) and so reaches every thread and every node through the site feed.
 */

/** All that custom domains read of the store. */
export type DomainReader = Pick<Store, 'getDomain' | 'listDomains' | 'getSite' | 'getSiteById' | 'getRevisionByNumber' | 'onSiteChanged'>;

/** A redirect to another address of the same site; a protected site's is private like its other answers. */
export interface DomainRedirect {
  host: string;
  private: boolean;
}

/** Where a request for a custom domain goes: a site (by its current name), or another host. */
export type DomainRoute = { kind: 'site'; name: string; domain: string } | ({ kind: 'redirect' } & DomainRedirect);

export interface DomainServing {
  /** The route of a Host header that is not one of the service's own, or undefined (unknown host). */
  route(hostHeader: string): DomainRoute | undefined;
  /** The primary domain a site's own address redirects to, if its owner chose so. */
  siteRedirect(siteName: string): DomainRedirect | undefined;
  /** Answers 301 to the same path and query on `to.host`. */
  redirect(res: HttpResponse, req: Pick<HttpRequest, 'getMethod' | 'getUrl' | 'getQuery'>, to: DomainRedirect): void;
  /**
   * The TLS terminator's question: may a certificate be obtained for `name`? Each yes can become
   * a certificate, so only for names that serve a page now, spelled as a terminator asks (lower
   * case, no trailing dot): `<site>.<site domain>` (or a former name of it) of a site that is
   * not deleted, expired or taken down; `<number>--<site>` under its current name when serving
   * shows that revision (stored and within the plan's history reach); and active custom domains
   * of such sites. No for everything else (the service's own hosts get theirs otherwise).
   */
  mayCertify(name: string): boolean;
}

// Distinct hosts remembered per thread (unknown ones too): beyond it the cache starts again.
const MAX_CACHED_HOSTS = 10_000;
// A name as a TLS terminator asks for it: lower-case ASCII labels, no trailing dot, port or space.
const CANONICAL_NAME = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+$/;

export function createDomainServing(options: {
  store: DomainReader;
  hosts: ServiceHosts;
  scheme: 'http' | 'https';
  /** Wall clock for expiry and history reach; injectable for tests. */
  now?: () => number;
}): DomainServing {
  const { store, hosts, scheme } = options;
  const now = options.now ?? Date.now;
  const routes = new Map<string, DomainRoute | null>();
  const siteRedirects = new Map<string, DomainRedirect | null>();
  // A name leads to the same site forever (names are never reused), so a known one is never
  // looked up again: a change costs serving no second read of the site by name.
  const siteIds = new Map<string, string | null>();
  store.onSiteChanged(() => {
    routes.clear();
    siteRedirects.clear();
    for (const [name, id] of siteIds) if (id === null) siteIds.delete(name);
  });

  const servingSite = (siteId: string) => {
    const site = store.getSiteById(siteId);
    return site && isServingSite(site, now()) ? site : undefined;
  };

  const resolve = (host: string): DomainRoute | null => {
    const record = store.getDomain(host);
    if (!record || record.status !== 'active') return null;
    const site = store.getSiteById(record.siteId);
    if (!site) return null;
    if (!record.primary) {
      const partner = store.getDomain(wwwPartner(host));
      if (partner && partner.siteId === record.siteId && partner.primary && partner.status === 'active') {
        return { kind: 'redirect', host: partner.domain, private: site.access !== undefined };
      }
    }
    // Deleted, expired or taken-down sites answer here as at their own address (410, 451).
    return { kind: 'site', name: site.name, domain: host };
  };

  return {
    route(hostHeader) {
      const host = hostOfHeader(hostHeader);
      // Longer than any domain: nothing to look up, and nothing worth remembering.
      if (host.length > 253) return undefined;
      let found = routes.get(host);
      if (found === undefined) {
        found = resolve(host);
        if (routes.size >= MAX_CACHED_HOSTS) routes.clear();
        routes.set(host, found);
      }
      return found ?? undefined;
    },

    siteRedirect(siteName) {
      let found = siteRedirects.get(siteName);
      if (found === undefined) {
        let siteId = siteIds.get(siteName);
        if (siteId === undefined) {
          siteId = store.getSite(siteName)?.id ?? null;
          if (siteIds.size >= MAX_CACHED_HOSTS) siteIds.clear();
          siteIds.set(siteName, siteId);
        }
        const site = siteId === null ? undefined : store.getSiteById(siteId);
        // A former name redirects to the current one first (site-server.ts), then from there.
        const primary = site && site.name === siteName && site.domainsChangedAt !== undefined ? store.listDomains(site.id).find((d) => d.primary) : undefined;
        found = primary && primary.redirectSite === true && primary.status === 'active' ? { host: primary.domain, private: site!.access !== undefined } : null;
        if (siteRedirects.size >= MAX_CACHED_HOSTS) siteRedirects.clear();
        siteRedirects.set(siteName, found);
      }
      return found ?? undefined;
    },

    redirect(res, req, to) {
      const query = req.getQuery();
      const location = `${scheme}://${to.host}${req.getUrl()}${query ? `?${query}` : ''}`;
      const headers = { Location: location, 'Cache-Control': 'public, max-age=300', 'Content-Type': 'text/plain; charset=utf-8' };
      writeResponse(res, 301, to.private ? Object.fromEntries(protectedHeaders(Object.entries(headers))) : headers, '', {
        head: req.getMethod() === 'head',
      });
    },

    mayCertify(name) {
      // Any other spelling (`SITE.`, ` site`, `site:443`) would be a name of its own to a
      // terminator that does not fold it, and to a CA's count of certificates.
      if (name.length > 253 || !CANONICAL_NAME.test(name)) return false;
      if (isAtOrUnder(name, hosts.siteDomain)) {
        const label = name.slice(0, Math.max(0, name.length - hosts.siteDomain.length - 1));
        if (!isDnsLabel(label)) return false;
        const preview = parsePreviewLabel(label);
        // A former name too: its address redirects to the current one, over HTTPS as well.
        const site = store.getSite(preview?.name ?? label);
        if (site === undefined || !isServingSite(site, now())) return false;
        if (preview === undefined) return true;
        // A preview, only where serving shows one: under the current name, for a revision in reach
        // that its owner has not deleted.
        if (site.name !== preview.name) return false;
        const revision = previewRevision(store, site, preview.number, now());
        return revision !== undefined && revision.deletedAt === undefined;
      }
      const record = store.getDomain(name);
      return record !== undefined && record.status === 'active' && servingSite(record.siteId) !== undefined;
    },
  };
}
