/**
 * Rate caps (`limit` hits per `windowMs`) count in fixed windows aligned to multiples of their
 * length, so every thread and node counts a moment in the same window whichever backend holds
 * the counters; a hit that would pass the cap waits for its window to end.
 */
export interface RateWindow {
  /** When the window holding `at` began: the counter's key. */
  start: number;
  /** How long from `at` until the window ends (what `Retry-After` says). */
  retryAfterMs: number;
}

export function rateWindow(at: number, windowMs: number): RateWindow {
  const start = at - (at % windowMs);
  return { start, retryAfterMs: start + windowMs - at };
}

/** Whether `hits` more on top of `held` would pass the cap. */
export function exceedsCap(held: number, hits: number, limit: number): boolean {
  return held + hits > limit;
}
