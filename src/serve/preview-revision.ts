import { isExpired, isInHistoryReach } from '../rules/index.js';
import type { RevisionRecord, SiteRecord, Store } from '../store/index.js';

/** What finding a preview's revision reads of the store. */
export type PreviewReader = Pick<Store, 'getRevisionByNumber'>;

/**
 * The revision a preview address (`<number>--<name>`) shows, or undefined when it shows none: a
 * revision of that number must be stored for the site and be within the plan's history reach
 * (one past it has no preview, whether it is still stored or not). Serving and the TLS ask both
 * decide through this one lookup, so a name gets a certificate exactly while it serves a page.
 */
export function previewRevision(store: PreviewReader, site: SiteRecord, number: number, now: number): RevisionRecord | undefined {
  const revision = store.getRevisionByNumber(site.id, number);
  return revision !== undefined && isInHistoryReach(site, revision, now) ? revision : undefined;
}

/**
 * Whether a site's address serves its content: not deleted, expired or taken down (those answer
 * 410 and 451), and published at least once.
 */
export function isServingSite(site: SiteRecord, now: number): site is SiteRecord & { liveRevision: string } {
  return site.state === 'active' && !isExpired(site, now) && site.liveRevision !== undefined;
}
