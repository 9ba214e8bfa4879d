import type { HttpResponse } from './uws.js';

/**
 * The life of a response that is not answered synchronously: `trackAbort` before its first
 * await, `isAborted` before every later write, and which responses a graceful stop must wait for.
 */

interface TrackedResponse extends HttpResponse {
  plinthAborted?: boolean;
  plinthOnAbort?: Array<() => void>;
  /** Answered in full, or aborted: nothing more will be written. */
  plinthFinished?: boolean;
  /** The set of a server's unanswered responses this one sits in (see `holdIfUnfinished`). */
  plinthPending?: Set<HttpResponse>;
}

/** For writers of their own (event streams): nothing more will be written, a stop need not wait. */
export function markFinished(res: HttpResponse): void {
  const tracked = res as TrackedResponse;
  tracked.plinthFinished = true;
  tracked.plinthPending?.delete(res);
}

/**
 * Called after a handler returned: a response it left unanswered (one that called `trackAbort`)
 * joins `pending` until it is answered or aborted, so a graceful stop can wait for it.
 */
export function holdIfUnfinished(res: HttpResponse, pending: Set<HttpResponse>): void {
  const tracked = res as TrackedResponse;
  if (tracked.plinthOnAbort === undefined || tracked.plinthFinished) return;
  tracked.plinthPending = pending;
  pending.add(res);
}

/** Marks the response as asynchronous: remembers aborts and runs `cleanup` hooks when one happens. */
export function trackAbort(res: HttpResponse, cleanup?: () => void): void {
  const tracked = res as TrackedResponse;
  if (tracked.plinthOnAbort) {
    if (cleanup) tracked.plinthOnAbort.push(cleanup);
    return;
  }
  tracked.plinthOnAbort = cleanup ? [cleanup] : [];
  res.onAborted(() => {
    tracked.plinthAborted = true;
    markFinished(res);
    for (const hook of tracked.plinthOnAbort ?? []) hook();
  });
}

export function isAborted(res: HttpResponse): boolean {
  return (res as TrackedResponse).plinthAborted === true;
}
