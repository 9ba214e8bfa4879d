/**
 * Rules of protected sites shared by the app (which hands out tickets) and the site host (which
 * redeems them): the reserved paths on a site host and where a visitor may be sent back to.
 */

/** Reserved paths on every site host. Dotfiles are never published, so no site file can sit here. */
export const ACCESS_PATHS = {
  login: '/.plinth/login',
  ticket: '/.plinth/ticket',
  /** Where a preview link is exchanged for a cookie of that preview's host (preview-links.ts). */
  share: '/.plinth/share',
} as const;

/**
 * The named server secret the site hosts' access cookies are signed with; preview links are
 * signed with a key derived from it (preview-links.ts), so the operations that hand links out
 * and the site hosts that honour them share one secret.
 */
export const ACCESS_SECRET_NAME = 'site-access-cookies';

/**
 * Whether a site's previews are kept to members (and holders of a preview link) while its live
 * address is public. A protected site's previews follow its own access instead.
 */
export function previewsKeptToMembers(site: { access?: object; previews?: object }): boolean {
  return site.access === undefined && site.previews !== undefined;
}

/** How long the access cookie of a protected site lasts. */
export const ACCESS_COOKIE_LIFETIME_MS = 7 * 24 * 3600_000;
/** How long the ticket of the members-only hop is good for (it is used within a redirect). */
export const ACCESS_TICKET_LIFETIME_MS = 60_000;

/**
 * A path on the same host to send a person back to (the app's `?next=` after sign-in, a site's
 * `return` after its gate), or undefined. The value is normalised as a browser would (dot
 * segments, `%2e`), and it is the normalised value that is checked and returned, since that is
 * what the `Location` header carries: it must start with exactly one `/`, and it never holds a
 * backslash, a control character or whitespace a browser strips (any of which can turn a path
 * into `//other.host`).
 */
export function localReturnPath(raw: string | undefined | null): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048) return undefined;
  if (!isLocalPath(raw)) return undefined;
  let resolved: URL;
  try {
    resolved = new URL(raw, 'http://host.invalid');
  } catch {
    return undefined;
  }
  if (resolved.origin !== 'http://host.invalid') return undefined;
  const path = `${resolved.pathname}${resolved.search}`;
  return isLocalPath(path) ? path : undefined;
}

/** `localReturnPath`, or `/` when the value is not a path on the same host. */
export function safeReturnPath(raw: string | undefined | null): string {
  return localReturnPath(raw) ?? '/';
}

/** Starts with one `/` and holds nothing a URL parser or a browser could read as another host. */
function isLocalPath(value: string): boolean {
  if (value[0] !== '/' || value[1] === '/' || value[1] === '\\') return false;
  // Control characters (browsers drop tab and newline), backslashes (read as `/`), and the
  // Unicode spaces and separators some parsers trim.
  return !/[\u0000-\u0020\u007f-\u00a0\\\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]/.test(value);
}

/** What a browser says of where a request comes from and what it is for (`Sec-Fetch-*`). */
export interface FetchMetadata {
  site: string;
  mode: string;
  dest: string;
}

/**
 * Whether a password site's 401 should carry `WWW-Authenticate: Basic`: for HTTP clients that send
 * the password only once challenged (`wget --user --password`, `curl --anyauth`, .NET and Java
 * clients), never for a browser, which would answer the challenge with its own password dialog
 * instead of showing the sign-in page. Browsers mark every request with `Sec-Fetch-Mode`, and
 * those from before it ask for HTML when they load a page.
 */
export function wantsBasicChallenge(fetchMode: string, accept: string): boolean {
  return fetchMode === '' && !accept.toLowerCase().includes('text/html');
}

/**
 * Whether a request may reach a protected site's gate and content, from its `Sec-Fetch-*`
 * headers. Every site host shares the site domain, so browsers count them all as one "site" and
 * send the access cookie along with a `<script>`, `<img>` or `fetch` from any other site host:
 * such a load would let another site read a private script or tell whether the visitor is signed
 * in. So a request from another origin (`same-site` and `cross-site` alike) is let through only as
 * a top-level navigation: following a link or a form to the site still works. Requests without
 * the headers (curl, older browsers) and the browser's own (`none`: typed, bookmarked) pass.
 */
export function mayReachProtected(fetch: FetchMetadata): boolean {
  const site = fetch.site.toLowerCase();
  if (site === '' || site === 'same-origin' || site === 'none') return true;
  const dest = fetch.dest.toLowerCase();
  // Browsers before Sec-Fetch-Dest sent `navigate` for top-level and `nested-navigate` for frames.
  return fetch.mode.toLowerCase() === 'navigate' && (dest === 'document' || dest === '');
}
