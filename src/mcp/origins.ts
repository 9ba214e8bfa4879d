/**
 * Which browser origins may call the MCP server (DNS-rebinding protection, MCP transport rules):
 * a request without `Origin` comes from a program and is judged by its token alone; one with an
 * `Origin` must name one of our own hosts, a loopback page (local tools such as the Inspector:
 * a rebinding attacker's page never has a loopback origin), or an origin the operator listed.
 */
export interface OriginPolicy {
  /** Our own public origins (MCP, app, docs). */
  own: readonly string[];
  /** `PLINTH_MCP_ALLOWED_ORIGINS`; `*` allows any. */
  extra: readonly string[];
}

const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

export function isAllowedOrigin(origin: string | undefined, policy: OriginPolicy): boolean {
  if (origin === undefined || origin === '') return true;
  const normal = origin.toLowerCase();
  if (policy.extra.includes('*')) return true;
  return policy.own.includes(normal) || policy.extra.includes(normal) || LOOPBACK.test(normal);
}
