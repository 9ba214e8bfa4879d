import { siteUrl, type PublicUrls } from '../config.js';
import { hasBadge, previewLabel, type LinkWarning, type RevisionExtras, type SiteAction } from '../rules/index.js';
import type { RevisionRecord, Role, SiteRecord } from '../store/index.js';
import type { DeploySiteView, DeployView, RevisionRefView, RevisionView, SiteView } from '../contract/index.js';

/** Records turned into the JSON shapes of shapes.ts, in one place so every endpoint spells fields the same way. */

export const iso = (ms: number): string => new Date(ms).toISOString();

export function deploySiteView(site: SiteRecord, urls: PublicUrls): DeploySiteView {
  const view: DeploySiteView = { name: site.name, url: siteUrl(urls, site.name), claimed: site.claimed };
  if (!site.claimed && site.expiresAt !== undefined) view.expires_at = iso(site.expiresAt);
  return view;
}

/** `previewUrlOf`: where the draft is shown (a preview link while the site keeps previews to members). */
export function deployRevisionView(
  revision: RevisionRecord,
  site: SiteRecord,
  urls: PublicUrls,
  previewUrlOf: (revision: RevisionRecord) => string = (r) => previewUrl(urls, site.name, r.number),
): DeployView['revision'] {
  const view: DeployView['revision'] = { id: revision.id, number: revision.number, files: revision.files, bytes: revision.bytes };
  // Live deploys answer as they always did; a draft says so and where to look at it.
  if (site.liveRevision !== revision.id) Object.assign(view, { live: false, preview_url: previewUrlOf(revision) });
  return view;
}

/** The read-only address of one revision (rules/preview-host.ts). */
export function previewUrl(urls: PublicUrls, name: string, number: number): string {
  return siteUrl(urls, previewLabel(name, number));
}

export function siteView(site: SiteRecord, role: Role, permissions: SiteAction[], live: RevisionRecord | undefined, urls: PublicUrls): SiteView {
  return {
    ...deploySiteView(site, urls),
    plan: site.plan,
    role,
    permissions,
    live_revision: live ? revisionRef(live) : null,
    badge: hasBadge(site.plan),
  };
}

export function revisionRef(revision: RevisionRecord): RevisionRefView {
  return { id: revision.id, number: revision.number, created_at: iso(revision.createdAt), created_by: revision.createdBy };
}

/** A revision in listings and rollback answers; `previewUrlOf` as for `deployRevisionView`. */
export function revisionView(
  revision: RevisionRecord,
  site: SiteRecord,
  urls: PublicUrls,
  previewUrlOf: (revision: RevisionRecord) => string = (r) => previewUrl(urls, site.name, r.number),
): RevisionView {
  return {
    ...revisionRef(revision),
    files: revision.files,
    bytes: revision.bytes,
    kind: revision.kind,
    ...(revision.rollbackOf !== undefined ? { rollback_of: revision.rollbackOf } : {}),
    live: site.liveRevision === revision.id,
    draft: revision.draft === true,
    preview_url: previewUrlOf(revision),
  };
}

/** The link check's answer in a deploy's view: the first warnings, and how many there were. */
export function warningsView(extras: RevisionExtras | undefined): { warnings: LinkWarning[]; warnings_total: number } {
  return { warnings: extras?.warnings ?? [], warnings_total: extras?.warningsTotal ?? 0 };
}
