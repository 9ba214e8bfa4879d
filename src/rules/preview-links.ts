import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Preview links: while a public site keeps its previews to members, the address a draft's deploy
 * answer and the revision listing hand out carries a signed token that opens that one preview for
 * anyone holding it, like Vercel's shareable links. The site host exchanges it for a cookie of
 * that preview's host and redirects to the clean address (serve/access.ts).
 *
 * The token is stateless: an HMAC, under a key derived from the access-cookie secret, of the
 * preview's host label, the site, the revision, the time previews were last kept to members, and
 * the token's expiry. So it opens only that revision's preview of that site, and it stops working
 * when it expires, when the setting is turned off and on again (a new `since`), or when the
 * revision is deleted (its preview answers 410 whatever the credential, and its number is never
 * used again).
 */

/** How long a preview link opens its preview; the listing hands out fresh ones. */
export const PREVIEW_LINK_LIFETIME_MS = 7 * 24 * 3600_000;

/** What a preview link is bound to. */
export interface PreviewLinkClaims {
  /** The preview's host label, `<number>--<name>`. */
  label: string;
  siteId: string;
  revisionId: string;
  /** `since` of the site's preview rule. */
  since: number;
}

const TOKEN = /^pv1\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

/** The token of a preview link that lasts until `expiresAt` (epoch ms). */
export function makePreviewLinkToken(secret: string, claims: PreviewLinkClaims, expiresAt: number): string {
  const expires = Math.floor(expiresAt).toString(36);
  return `pv1.${expires}.${signature(secret, claims, expires)}`;
}

/** When a token made for these claims stops working, or undefined when it is not such a token or has expired. */
export function previewLinkExpiry(secret: string, token: string, claims: PreviewLinkClaims, now: number): number | undefined {
  const match = TOKEN.exec(token);
  if (match === null) return undefined;
  const [, expires, given] = match as unknown as [string, string, string];
  const expiresAt = parseInt(expires, 36);
  if (!(expiresAt > now)) return undefined;
  const expected = Buffer.from(signature(secret, claims, expires));
  const received = Buffer.from(given);
  return expected.length === received.length && timingSafeEqual(expected, received) ? expiresAt : undefined;
}

function signature(secret: string, claims: PreviewLinkClaims, expires: string): string {
  // A key of its own, so a link's signature can never pass for an access cookie's or the reverse.
  const key = createHmac('sha256', secret).update('plinth preview links').digest();
  return createHmac('sha256', key).update(`v1|${claims.label}|${claims.siteId}|${claims.revisionId}|${claims.since}|${expires}`).digest('base64url');
}
