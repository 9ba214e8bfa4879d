import { siteUrl, type PublicUrls } from '../config.js';
import type { RevisionRecord, SiteRecord } from '../store/index.js';

/** JSON shapes of SPEC 2, built in one place so every endpoint spells fields the same way. */

export const iso = (ms: number): string => new Date(ms).toISOString();

export interface DeploySiteView {
  name: string;
  url: string;
  claimed: boolean;
  expires_at?: string;
}

export function deploySiteView(site: SiteRecord, urls: PublicUrls): DeploySiteView {
  const view: DeploySiteView = { name: site.name, url: siteUrl(urls, site.name), claimed: site.claimed };
  if (!site.claimed && site.expiresAt !== undefined) view.expires_at = iso(site.expiresAt);
  return view;
}

export function deployRevisionView(revision: RevisionRecord): { id: string; number: number; files: number; bytes: number } {
  return { id: revision.id, number: revision.number, files: revision.files, bytes: revision.bytes };
}

/** True when an unclaimed site is past its expiry (decided at read time, never stored). */
export function isExpired(site: SiteRecord, now: number): boolean {
  return !site.claimed && site.expiresAt !== undefined && site.expiresAt <= now;
}
