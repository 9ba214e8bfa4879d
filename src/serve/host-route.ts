import type { HostConfig } from '../config.js';
import { isDnsLabel, parsePreviewLabel } from '../rules/index.js';

/** `preview`: the host is a revision's preview address, `<number>--<name>`. */
export type HostRoute = { kind: 'site'; name: string; preview?: number } | { kind: 'api' | 'mcp' | 'app' | 'docs' } | { kind: 'unknown' };

/**
 * Decides which surface a request is for from its Host header: port stripped, lower-cased, a
 * trailing dot ignored. `<name>.<site domain>` is a site when `<name>` is a single valid label.
 */
export function routeHost(hostHeader: string, hosts: HostConfig): HostRoute {
  let host = hostHeader.toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    host = close === -1 ? host : host.slice(0, close + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);

  const siteDomain = hosts.siteDomain;
  if (host.length > siteDomain.length + 1 && host.endsWith(siteDomain) && host.charCodeAt(host.length - siteDomain.length - 1) === 46) {
    const name = host.slice(0, host.length - siteDomain.length - 1);
    // One DNS label: what a site name can be. Anything else under the site domain is no site.
    if (!isDnsLabel(name)) return { kind: 'unknown' };
    const preview = parsePreviewLabel(name);
    return preview === undefined ? { kind: 'site', name } : { kind: 'site', name: preview.name, preview: preview.number };
  }
  if (host === hosts.api) return { kind: 'api' };
  if (host === hosts.mcp) return { kind: 'mcp' };
  if (host === hosts.app) return { kind: 'app' };
  if (host === hosts.docs) return { kind: 'docs' };
  return { kind: 'unknown' };
}

/**
 * `routeHost` with its answers kept per Host header, as a thread sees a handful of hosts over and
 * over (each site's, the API's). A kept answer also hands the site server the same name string
 * every time, whose hash its caches have computed already. Up to `maxEntries` distinct headers
 * (unknown ones too); past that the cache starts again. The routes given are shared: read only.
 */
export function createHostRouter(hosts: HostConfig, maxEntries = 10_000): (hostHeader: string) => HostRoute {
  const routes = new Map<string, HostRoute>();
  // The last header and its route: requests on a kept-alive connection, and most of a busy
  // thread's, name the host the one before did. uWS hands over a fresh string each time, so the
  // Map would hash it anew; comparing it with the last one's text is cheaper.
  let lastHeader = '';
  let lastRoute: HostRoute | undefined;
  return (hostHeader) => {
    if (hostHeader === lastHeader && lastRoute !== undefined) return lastRoute;
    let route = routes.get(hostHeader);
    if (route === undefined) {
      route = routeHost(hostHeader, hosts);
      if (routes.size >= maxEntries) routes.clear();
      routes.set(hostHeader, route);
    }
    lastHeader = hostHeader;
    lastRoute = route;
    return route;
  };
}
