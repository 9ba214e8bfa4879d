/**
 * Which stored path answers a normalized request path (SPEC 4.5.1–3). Pure: the caller passes
 * `has`, an LMDB point lookup against the live revision. Candidates are probed in order and the
 * first hit wins, so the usual cases cost one call (`style.css`, `/`, `about/`) or two (`about`
 * served by `about.html`).
 */
import { isSkippedPath } from '../rules/index.js';

export type Resolution =
  | { kind: 'file'; path: string; status: 200 }
  | { kind: 'not_found_page'; path: '404.html'; status: 404 }
  | { kind: 'spa'; path: 'index.html'; status: 200 }
  | { kind: 'missing'; status: 404 };

const INDEX = 'index.html';
const NOT_FOUND_PAGE = '404.html';

/** Stored paths that could answer the request, most specific first. */
function candidatesFor(path: string, trailingSlash: boolean): string[] {
  if (path === '') return [INDEX];
  if (trailingSlash) return [`${path}/${INDEX}`];
  // The exact name wins so extensionless files (`CNAME`, `LICENSE`) stay reachable.
  return [path, `${path}.html`, `${path}/${INDEX}`];
}

/** SPEC 4.5.3 asks whether the requested path has a file extension; `about/` never does. */
function hasExtension(path: string, trailingSlash: boolean): boolean {
  if (trailingSlash) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name.lastIndexOf('.') > 0;
}

export function resolveSitePath(path: string, trailingSlash: boolean, has: (path: string) => boolean): Resolution {
  // Skipped paths (`.git/…`, `.env`, `*.map`, …) should never be in a revision; if one slipped in,
  // it is still not served. They get the site's 404 page but never the SPA shell: a 200 for
  // `/.env` or `/.git/config` makes security scanners report a leak that is not there.
  const skipped = isSkippedPath(path);
  let indexProbed = false;
  if (!skipped) {
    for (const candidate of candidatesFor(path, trailingSlash)) {
      // `about` → `about/index.html` can be skipped (`node_modules/index.html`) even when `about` is not.
      if (isSkippedPath(candidate)) continue;
      const found = has(candidate);
      if (candidate === INDEX) indexProbed = true;
      if (found) return { kind: 'file', path: candidate, status: 200 };
    }
  }

  if (has(NOT_FOUND_PAGE)) return { kind: 'not_found_page', path: NOT_FOUND_PAGE, status: 404 };
  // Single-page apps route extensionless paths client-side. A missing `app.js` must stay a 404:
  // answering it with HTML makes the browser report a confusing MIME error instead.
  // `indexProbed` means we already know index.html is absent (request for `/`): skip the repeat.
  if (!skipped && !hasExtension(path, trailingSlash) && !indexProbed && has(INDEX)) {
    return { kind: 'spa', path: INDEX, status: 200 };
  }
  return { kind: 'missing', status: 404 };
}
