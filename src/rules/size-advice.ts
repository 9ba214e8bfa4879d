import { PLAN_LIMITS } from './plans.js';

/**
 * What a refused deploy says when the site is too large (SPEC 8 rule 3): the total and the limit,
 * the largest files (never merely the file where the running total crossed the limit), what
 * leaving them out would bring the site to, advice that fits the kind of files they are, and for
 * a deploy without an account, that an account allows more — not "upgrade the plan".
 */

const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;

/** `5 MB`, `1.5 GB`, `730 KB`, `54 bytes` (1 MB = 1024 × 1024 bytes). */
export function sizeWords(bytes: number): string {
  if (bytes < KB) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const [unit, size] = bytes >= GB ? ['GB', bytes / GB] : bytes >= MB ? ['MB', bytes / MB] : ['KB', bytes / KB];
  return `${size < 10 ? +size.toFixed(1) : Math.round(size)} ${unit}`;
}

export interface SizedFile {
  file: string;
  size: number;
}

export interface SiteTooLarge {
  message: string;
  agentMessage: string;
  details: { file: string; limit: number; total: number; largest: SizedFile[] };
}

const LISTED = 5;
const IMAGE_OR_MEDIA = /\.(png|jpe?g|gif|webp|avif|bmp|tiff?|svg|psd|mp4|webm|mov|avi|mkv|mp3|wav|ogg|flac|m4a)$/i;
const CODE = /\.(m?js|cjs|css|wasm|map)$/i;

function adviceFor(files: readonly SizedFile[]): string {
  // By bytes: what takes the room is what to act on.
  const bytes = (pattern: RegExp): number => files.filter((f) => pattern.test(f.file)).reduce((sum, f) => sum + f.size, 0);
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const media = bytes(IMAGE_OR_MEDIA);
  const code = bytes(CODE);
  if (media * 2 > total) return 'Compress or resize the large images and media, or leave out the ones the site does not use';
  if (code * 2 > total) return 'Publish only the built site: minified bundles without source maps, and no bundles or libraries the pages do not load';
  return 'Leave out files the site does not need (sources, archives, unused assets), or make the large ones smaller';
}

/**
 * `sizes`: every file counted so far (when `complete` is false, counting stopped early and the
 * total is a lower bound). `anonymous`: a deploy without an account.
 */
export function siteTooLarge(sizes: readonly SizedFile[], limit: number, options: { anonymous: boolean; complete: boolean }): SiteTooLarge {
  const total = sizes.reduce((sum, f) => sum + f.size, 0);
  const largest = [...sizes].sort((a, b) => b.size - a.size || a.file.localeCompare(b.file));
  const listed = largest.slice(0, LISTED);
  const atLeast = options.complete ? '' : 'at least ';
  // The fewest largest files whose removal makes the rest fit.
  let remaining = total;
  let dropped = 0;
  while (remaining > limit && dropped < largest.length) remaining -= largest[dropped++]!.size;
  const names = listed.map((f) => `${f.file} (${sizeWords(f.size)})`).join(', ');
  let fits = '';
  if (options.complete && remaining <= limit && dropped > 0) {
    const without = dropped === 1 ? largest[0]!.file : dropped === 2 ? `${largest[0]!.file} and ${largest[1]!.file}` : `the ${dropped} largest files`;
    fits = ` Without ${without} it would be ${sizeWords(remaining)}, which fits.`;
  }
  const account = options.anonymous
    ? ` A site published without an account can be ${sizeWords(PLAN_LIMITS.anonymous.maxSiteBytes)}; a free account allows ${sizeWords(PLAN_LIMITS.free.maxSiteBytes)} per site: ask your user to create an account (by signing in to the account app), make an API token there, and deploy with it.`
    : ' Larger plans allow more per site (see the limits in the docs).';
  return {
    message: `The site's files add up to ${atLeast}${sizeWords(total)}; the limit per site is ${sizeWords(limit)}.`,
    agentMessage:
      `The site's files add up to ${atLeast}${sizeWords(total)} and the limit per site is ${sizeWords(limit)}, so ${atLeast}${sizeWords(total - limit)} must go. ` +
      `The largest files: ${names}.${fits} ${adviceFor(listed)}, then deploy again.${account}`,
    details: { file: listed[0]?.file ?? '', limit, total, largest: largest.slice(0, 10) },
  };
}

/** The sentence a per-file or file-count refusal adds for a deploy without an account. */
export function accountAllowsMore(what: 'file' | 'files'): string {
  const anon = PLAN_LIMITS.anonymous;
  const free = PLAN_LIMITS.free;
  return what === 'file'
    ? ` Without an account a file can be ${sizeWords(anon.maxFileBytes)}; a free account allows ${sizeWords(free.maxFileBytes)}: ask your user to create an account (by signing in to the account app), make an API token there, and deploy with it.`
    : ` Without an account a site can have ${anon.maxFiles} files; a free account allows ${free.maxFiles}: ask your user to create an account (by signing in to the account app), make an API token there, and deploy with it.`;
}
