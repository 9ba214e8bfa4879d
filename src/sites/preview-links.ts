import { randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import { ACCESS_PATHS, ACCESS_SECRET_NAME, makePreviewLinkToken, PREVIEW_LINK_LIFETIME_MS, previewLabel, previewsKeptToMembers } from '../rules/index.js';
import type { RevisionRecord, SiteRecord } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { previewUrl } from './views.js';

/** A revision's preview address as a caller is given it. */
export type PreviewUrlOf = (revision: Pick<RevisionRecord, 'id' | 'number'>) => string;

export interface PreviewLinks {
  /**
   * The preview addresses of a site's revisions: plain `<number>--<name>` addresses, or, while
   * the site keeps its previews to members, preview links that open one preview for whoever
   * holds them (rules/preview-links.ts). Only members and the site token see these answers.
   */
  of(site: SiteRecord): Promise<PreviewUrlOf>;
}

export function previewLinks(deps: Pick<OperationsDeps, 'store' | 'config' | 'now'>): PreviewLinks {
  const urls = deps.config.publicUrls;
  let secret: Promise<string> | undefined;
  const signingSecret = (): Promise<string> =>
    (secret ??= deps.store
      .ensureSecret(ACCESS_SECRET_NAME, () => randomBytes(32).toString('base64url'))
      .catch((err: unknown) => {
        secret = undefined;
        throw err;
      }));

  return {
    async of(site) {
      const since = site.previews?.since;
      if (!previewsKeptToMembers(site) || since === undefined) return (revision) => previewUrl(urls, site.name, revision.number);
      const key = await signingSecret();
      const expiresAt = deps.now() + PREVIEW_LINK_LIFETIME_MS;
      return (revision) => {
        const label = previewLabel(site.name, revision.number);
        const token = makePreviewLinkToken(key, { label, siteId: site.id, revisionId: revision.id, since }, expiresAt);
        return `${siteUrl(urls, label)}${ACCESS_PATHS.share}?token=${token}`;
      };
    },
  };
}
