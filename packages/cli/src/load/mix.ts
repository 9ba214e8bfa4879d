import type { Random } from './random.js';

/**
 * What visitors ask a publishing host for: pages, the assets pages pull in (styles, scripts),
 * media (images), now and then a large file, and some addresses that do not exist. A share of
 * pages and assets are revalidations (`If-None-Match` with the ETag seen before), as browsers send
 * for cached files once their max-age has passed.
 */
export type RequestKind = 'page' | 'asset' | 'media' | 'large' | 'miss';

export const REQUEST_KINDS: readonly RequestKind[] = ['page', 'asset', 'media', 'large', 'miss'];

export type TrafficMix = Readonly<Record<RequestKind, number>> & {
  /** Of page and asset requests with a known ETag, the share sent with `If-None-Match`. */
  readonly revalidate: number;
};

export const DEFAULT_MIX: TrafficMix = { page: 0.42, asset: 0.38, media: 0.15, large: 0.002, miss: 0.03, revalidate: 0.3 };

/** Picks a kind with probability proportional to its weight in the mix. */
export function pickKind(random: Random, mix: TrafficMix): RequestKind {
  let total = 0;
  for (const kind of REQUEST_KINDS) total += mix[kind];
  let target = random() * total;
  for (const kind of REQUEST_KINDS) {
    target -= mix[kind];
    if (target < 0) return kind;
  }
  return 'page';
}

/** Whether a page or asset request with a known ETag revalidates. */
export function isRevalidation(random: Random, kind: RequestKind, mix: TrafficMix): boolean {
  return (kind === 'page' || kind === 'asset') && random() < mix.revalidate;
}
