import type { Corpus } from './corpus.js';
import { isRevalidation, pickKind, type RequestKind, type TrafficMix } from './mix.js';
import { randomInt, type Random } from './random.js';
import type { Zipf } from './zipf.js';

/**
 * The traffic plan: which site (Zipf by rank), which kind of request (the mix), which file of that
 * kind, and the address a browser would ask for it by (`/about` for about.html, `/docs/` for
 * docs/index.html). Pure: the same seed gives the same requests.
 */
export interface TrafficFile {
  /** The request path. */
  url: string;
  /** The file's path in the site. */
  path: string;
  type: string;
  /** Every sha256 a correct answer may have: the corpus's, and those of deploys made during the run. */
  sha256: string[];
}

export interface TrafficSite {
  name: string;
  host: string;
  /** The site's own origin (scheme, host, port), used when no --connect address is given. */
  origin: string;
  files: Record<Exclude<RequestKind, 'miss'>, TrafficFile[]>;
}

export interface PlannedRequest {
  site: number;
  kind: RequestKind;
  url: string;
  /** Undefined for a miss. */
  file?: TrafficFile;
  revalidate: boolean;
}

/** The address a browser asks for a page by: no `.html`, a folder's index as the folder. */
export function pageUrl(path: string): string {
  if (path === 'index.html') return '/';
  if (path.endsWith('/index.html')) return `/${path.slice(0, -'index.html'.length)}`;
  return `/${path.replace(/\.html$/, '')}`;
}

export function trafficSites(corpus: Corpus): TrafficSite[] {
  return corpus.sites.map((site) => {
    const files: TrafficSite['files'] = { page: [], asset: [], media: [], large: [] };
    for (const file of site.files) {
      if (file.kind === 'rules') continue;
      files[file.kind].push({ url: file.kind === 'page' ? pageUrl(file.path) : `/${file.path}`, path: file.path, type: file.type, sha256: [file.sha256] });
    }
    return { name: site.name, host: site.host, origin: new URL(site.url).origin, files };
  });
}

// A site without the chosen kind answers with the next best thing it has.
const FALLBACK: Record<Exclude<RequestKind, 'miss'>, Exclude<RequestKind, 'miss'> | undefined> = {
  large: 'media',
  media: 'asset',
  asset: 'page',
  page: undefined,
};

export function planRequest(random: Random, zipf: Zipf, sites: readonly TrafficSite[], mix: TrafficMix): PlannedRequest {
  const site = zipf.pick(random);
  const kind = pickKind(random, mix);
  if (kind === 'miss') return { site, kind, url: `/no-such-page-${randomInt(random, 1, 1_000_000)}.html`, revalidate: false };
  let chosen: Exclude<RequestKind, 'miss'> | undefined = kind;
  while (chosen !== undefined && sites[site]!.files[chosen].length === 0) chosen = FALLBACK[chosen];
  const choices = sites[site]!.files[chosen ?? 'page'];
  const file = choices[randomInt(random, 0, choices.length - 1)]!;
  return { site, kind: chosen ?? 'page', url: file.url, file, revalidate: isRevalidation(random, kind, mix) };
}

/** The status a correct server answers: 404 for a miss, 304 for a revalidation that sent an ETag, else 200. */
export function expectedStatuses(request: PlannedRequest, sentEtag: boolean): readonly number[] {
  if (request.kind === 'miss') return [404];
  return sentEtag ? [304, 200] : [200];
}
