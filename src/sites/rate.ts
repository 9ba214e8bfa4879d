import { ServiceError } from '../errors.js';
import type { RateCheck, Store } from '../store/index.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3600_000;
export const DAY_MS = 24 * HOUR_MS;

/** One cap: `limit` hits per `windowMs` on `scope`; a limit of 0 means no cap. */
export function cap(scope: string, limit: number, windowMs: number): RateCheck | undefined {
  return limit > 0 ? { scope, limit, windowMs } : undefined;
}

/**
 * Counts one hit against every cap, all or nothing, and throws `429 limit` with `Retry-After`
 * when any is full. `describe` words the refusal from the wait in seconds.
 */
export async function takeOrRefuse(
  store: Store,
  caps: ReadonlyArray<RateCheck | undefined>,
  describe: (seconds: number) => { message: string; agentMessage: string },
): Promise<void> {
  const checks = caps.filter((check): check is RateCheck => check !== undefined);
  if (checks.length === 0) return;
  const result = await store.takeRateTokens(checks);
  if (result.allowed) return;
  const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
  const { message, agentMessage } = describe(seconds);
  throw new ServiceError('limit', message, { agentMessage, headers: { 'Retry-After': String(seconds) } });
}
