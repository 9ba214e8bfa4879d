/**
 * A request's path as any log line holds it: claim links, deletion approvals and invitations
 * carry their secret as a path segment, and logs are read by more people, and kept longer, than
 * the links. Used by the access log and by every line that names a request's path.
 */

const MAX_PATH = 1024;
/**
 * A random credential or id in a path: a short lower-case prefix, `_`, and at least 16 URL-safe
 * characters (`ct_…` claim links, `ap_…` approvals, `inv_…` invites, `st_…`, `pl_…`).
 */
const CREDENTIAL = /^([a-z]{2,4})_[A-Za-z0-9_-]{16,}$/;

/** The path as logged: no query, every credential-shaped segment cut to its prefix, bounded length. */
export function loggedPath(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const redacted = path
    .split('/')
    .map((segment) => segment.replace(CREDENTIAL, '$1_…'))
    .join('/');
  return redacted.length > MAX_PATH ? `${redacted.slice(0, MAX_PATH)}…` : redacted;
}
