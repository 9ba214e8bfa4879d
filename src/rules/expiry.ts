/**
 * Whether an unclaimed anonymous site is past its expiry. Decided at read time, never stored:
 * serving answers 410 from the moment it is true, whatever the sweeper has done.
 */
export function isExpired(site: { claimed: boolean; expiresAt?: number }, now: number): boolean {
  return !site.claimed && site.expiresAt !== undefined && site.expiresAt <= now;
}
