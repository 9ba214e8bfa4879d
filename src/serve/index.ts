/** Published-site serving: Host routing and the site request handler. */
export { createSiteServer, type SiteCacheStats, type SiteServer, type SiteServerOptions } from './site-server.js';
export type { SiteReader } from './site-cache.js';
export { createHostRouter, routeHost, type HostRoute } from './host-route.js';
export { createDomainServing, type DomainReader, type DomainRedirect, type DomainRoute, type DomainServing } from './domain-route.js';
export { createAccessGate, type AccessGate, type AccessGateOptions } from './access.js';
export { createVisitCounter, type VisitCounter } from './visits.js';
export { startAnalyticsFlush, type AnalyticsFlusher } from './analytics-flush.js';
