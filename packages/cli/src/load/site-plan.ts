import { logUniform, randomInt, seededRandom } from './random.js';

/** What a file is for: the traffic mix asks for pages, assets, media and large files by kind. */
export type FileKind = 'page' | 'asset' | 'media' | 'large' | 'rules';

export interface PlannedFile {
  path: string;
  size: number;
  kind: FileKind;
}

const KB = 1024;
const MB = 1024 * KB;

/** Content types by extension, as Plinth sends them (nginx's export uses the same table). */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  mp4: 'video/mp4',
};

export function contentTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return CONTENT_TYPES[path.slice(dot + 1)] ?? 'application/octet-stream';
}

const PAGE_NAMES = ['about', 'contact', 'pricing', 'team', 'careers', 'faq', 'press', 'privacy'];

/**
 * The files of one site, from its seed: HTML pages of 2–40 KB, CSS and JS of 5–300 KB, images of
 * 20 KB–2 MB, on a few sites large files of 5–50 MB, a `404.html` on some and `_redirects` on some.
 * `scale` shrinks (or grows) every size, for quick runs.
 */
export function planSite(seed: number, scale = 1): PlannedFile[] {
  const random = seededRandom(seed);
  const size = (min: number, max: number): number => Math.max(64, Math.round(logUniform(random, min, max) * scale));
  const files: PlannedFile[] = [{ path: 'index.html', size: size(2 * KB, 40 * KB), kind: 'page' }];
  const pages = randomInt(random, 2, 8);
  for (let i = 0; i < pages; i++) files.push({ path: `${PAGE_NAMES[i]}.html`, size: size(2 * KB, 40 * KB), kind: 'page' });
  const posts = randomInt(random, 0, 6);
  for (let i = 1; i <= posts; i++) files.push({ path: `blog/post-${i}.html`, size: size(2 * KB, 40 * KB), kind: 'page' });
  if (random() < 0.5) files.push({ path: 'docs/index.html', size: size(2 * KB, 40 * KB), kind: 'page' });
  for (let i = 1, n = randomInt(random, 1, 3); i <= n; i++) files.push({ path: `assets/style-${i}.css`, size: size(5 * KB, 300 * KB), kind: 'asset' });
  for (let i = 1, n = randomInt(random, 1, 4); i <= n; i++) files.push({ path: `assets/app-${i}.js`, size: size(5 * KB, 300 * KB), kind: 'asset' });
  const formats = ['jpg', 'png', 'webp'];
  for (let i = 1, n = randomInt(random, 2, 10); i <= n; i++)
    files.push({ path: `images/photo-${i}.${formats[randomInt(random, 0, 2)]}`, size: size(20 * KB, 2 * MB), kind: 'media' });
  if (random() < 0.03)
    for (let i = 1, n = randomInt(random, 1, 2); i <= n; i++) files.push({ path: `media/video-${i}.mp4`, size: size(5 * MB, 50 * MB), kind: 'large' });
  if (random() < 0.3) files.push({ path: '404.html', size: size(2 * KB, 8 * KB), kind: 'rules' });
  if (random() < 0.2) files.push({ path: '_redirects', size: 0, kind: 'rules' });
  return files;
}
