/**
 * Which answer a request path of a site gets (SPEC 4.5.1–3, with the site's `_redirects`). Pure:
 * the caller passes `has`, a lookup against the revision's files. Shared by serving and by the
 * deploy's link check, which asks the same question of every reference in the site's pages.
 *
 * Order: a forced rule (`!`); an existing file (`about`, `about.html`, `about/` → its index); a
 * folder's address without its slash → 301 to it with the slash, so relative links in its index
 * resolve inside the folder; the first matching rule; the site's 404.html; the single-page-app
 * fallback (index.html for paths without an extension); nothing.
 */
import { matchRedirect, redirectTarget, targetPath, type CompiledRedirects, type RedirectStatus } from './redirects-file.js';
import { isRulesFile } from './site-rules.js';
import { isSkippedPath } from './site-paths.js';

export type Resolution =
  | { kind: 'file'; path: string; status: 200 }
  | { kind: 'not_found_page'; path: '404.html'; status: 404 }
  | { kind: 'spa'; path: 'index.html'; status: 200 }
  | { kind: 'missing'; status: 404 }
  /** A folder asked for without its slash: 301 to `location` (the request's query goes along). */
  | { kind: 'folder'; location: string; status: 301 }
  /** A `_redirects` redirect; `ownQuery`: the target has its own query, the request's is not added. */
  | { kind: 'redirect'; location: string; ownQuery: boolean; status: Exclude<RedirectStatus, 200 | 404 | 410> }
  /** A `_redirects` 404 or 410 rule whose target page exists: that page, with the rule's status. */
  | { kind: 'rule_page'; path: string; status: 404 | 410 }
  /** A `_redirects` 410 rule whose target does not exist. */
  | { kind: 'gone'; status: 410 };

const INDEX = 'index.html';
const NOT_FOUND_PAGE = '404.html';

/** SPEC 4.5.3 asks whether the requested path has a file extension; `about/` never does. */
function hasExtension(path: string, trailingSlash: boolean): boolean {
  if (trailingSlash) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name.lastIndexOf('.') > 0;
}

/** Never answered as files: skipped names, and the rules files themselves. */
function isHidden(path: string): boolean {
  return isSkippedPath(path) || isRulesFile(path);
}

/** The file a path names directly: itself, `<path>.html`, or its folder's index with a slash. */
function findFile(path: string, trailingSlash: boolean, has: (path: string) => boolean): string | undefined {
  if (path === '') return has(INDEX) ? INDEX : undefined;
  // The exact name wins so extensionless files (`CNAME`, `LICENSE`) stay reachable.
  const candidates = trailingSlash ? [`${path}/${INDEX}`] : [path, `${path}.html`];
  for (const candidate of candidates) {
    // `about` → `about/index.html` can be skipped (`node_modules/index.html`) even when `about` is not.
    if (!isHidden(candidate) && has(candidate)) return candidate;
  }
  return undefined;
}

/** `/a b/c` → `/a%20b/c/`. */
function folderLocation(path: string): string {
  return `/${path.split('/').map(encodeURIComponent).join('/')}/`;
}

export function resolveSitePath(
  path: string,
  trailingSlash: boolean,
  has: (path: string) => boolean,
  redirects?: CompiledRedirects,
  query: () => URLSearchParams = () => new URLSearchParams(),
  host?: string,
): Resolution {
  // Skipped paths (`.git/…`, `.env`, `*.map`, …) should never be in a revision; if one slipped in,
  // it is still not served. They get the site's 404 page but never the SPA shell: a 200 for
  // `/.env` or `/.git/config` makes security scanners report a leak that is not there.
  const hidden = isHidden(path);
  const file = hidden ? undefined : findFile(path, trailingSlash, has);
  const folderIndex = `${path}/${INDEX}`;
  const folder = file === undefined && !hidden && !trailingSlash && path !== '' && !isHidden(folderIndex) && has(folderIndex);

  if (redirects !== undefined && redirects.rules.length > 0) {
    const segments = path === '' ? [] : path.split('/');
    const match = matchRedirect(redirects, segments, file !== undefined || folder, query, host);
    if (match !== undefined) {
      const { status } = match.rule;
      if (status !== 200 && status !== 404 && status !== 410) {
        return { kind: 'redirect', location: redirectTarget(match, trailingSlash), ownQuery: match.rule.ownQuery, status };
      }
      const target = targetPath(match, trailingSlash);
      const found = target === undefined || isHidden(target.path) ? undefined : findTarget(target.path, target.trailingSlash, has);
      if (status === 200 && found !== undefined) return { kind: 'file', path: found, status: 200 };
      if (status === 410) return found !== undefined ? { kind: 'rule_page', path: found, status: 410 } : { kind: 'gone', status: 410 };
      if (status === 404 && found !== undefined) return { kind: 'rule_page', path: found, status: 404 };
      return notFound(has);
    }
  }

  if (file !== undefined) return { kind: 'file', path: file, status: 200 };
  if (folder) return { kind: 'folder', location: folderLocation(path), status: 301 };
  const answer = notFound(has);
  if (answer.kind === 'not_found_page') return answer;
  // Single-page apps route extensionless paths client-side. A missing `app.js` must stay a 404:
  // answering it with HTML makes the browser report a confusing MIME error instead.
  // For `/`, index.html is known to be absent already.
  if (!hidden && path !== '' && !hasExtension(path, trailingSlash) && has(INDEX)) return { kind: 'spa', path: INDEX, status: 200 };
  return answer;
}

/** A rule's target page: served where it is, a folder's index included (one hop, no redirect). */
function findTarget(path: string, trailingSlash: boolean, has: (path: string) => boolean): string | undefined {
  const found = findFile(path, trailingSlash, has);
  if (found !== undefined || trailingSlash || path === '') return found;
  const index = `${path}/${INDEX}`;
  return !isHidden(index) && has(index) ? index : undefined;
}

function notFound(has: (path: string) => boolean): Extract<Resolution, { kind: 'not_found_page' | 'missing' }> {
  return has(NOT_FOUND_PAGE) ? { kind: 'not_found_page', path: NOT_FOUND_PAGE, status: 404 } : { kind: 'missing', status: 404 };
}
