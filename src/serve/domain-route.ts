import { writeResponse, type HttpRequest, type HttpResponse } from '../http/index.js';
import { hostOfHeader, isAtOrUnder, parsePreviewLabel, wwwPartner, type ServiceHosts } from '../rules/index.js';
import type { Store } from '../store/index.js';
import { protectedHeaders } from './headers.js';

/**
 * Custom domains on the serving side: which site a Host that is none of ours belongs to, the
 * apex ↔ www redirect to a primary domain, the site address's own redirect to it, and the TLS
 * terminator's question. Reads are synchronous against the local replica (as site lookups are)
 * and cached per thread; any site change forgets the cache, since every domain change stamps its
 * site (store/domains.ts) and so reaches every thread and every node through the site feed.
 */

/** All that custom domains read of the store. */
export type DomainReader = Pick<Store, 'getDomain' | 'listDomains' | 'getSite' | 'getSiteById' | 'onSiteChanged'>;

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
  redirect(res: HttpResponse, req: HttpRequest, to: DomainRedirect): void;
  /**
   * The TLS terminator's question: may a certificate be obtained for `name`? Yes for
   * `<site>.<site domain>` of a site that exists and is not deleted, and for active custom
   * domains of such sites; no for everything else (the service's own hosts get theirs otherwise).
   */
  mayCertify(name: string): boolean;
}

// Distinct hosts remembered per thread (unknown ones too): beyond it the cache starts again.
const MAX_CACHED_HOSTS = 10_000;
const SITE_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function createDomainServing(options: { store: DomainReader; hosts: ServiceHosts; scheme: 'http' | 'https' }): DomainServing {
  const { store, hosts, scheme } = options;
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

  const liveSite = (siteId: string) => {
    const site = store.getSiteById(siteId);
    return site && site.state !== 'deleted' ? site : undefined;
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
      const host = hostOfHeader(name.trim());
      if (host === '' || host.length > 253) return false;
      if (isAtOrUnder(host, hosts.siteDomain)) {
        const label = host.slice(0, Math.max(0, host.length - hosts.siteDomain.length - 1));
        if (!SITE_LABEL.test(label)) return false;
        // A preview address (`<number>--<name>`) is certified as its site is.
        const site = store.getSite(parsePreviewLabel(label)?.name ?? label);
        // A former name too: its address redirects to the current one, over HTTPS as well.
        return site !== undefined && site.state !== 'deleted';
      }
      const record = store.getDomain(host);
      return record !== undefined && record.status === 'active' && liveSite(record.siteId) !== undefined;
    },
  };
}
