import { createCipheriv, createHash } from 'node:crypto';
import type { PlannedFile } from './site-plan.js';
import { deriveSeed, randomInt, seededRandom, type Random } from './random.js';

/**
 * The bytes of a corpus file, from the site's seed and the file's path: text that compresses as
 * real pages, styles and scripts do (words and markup, not noise), and images and videos that do
 * not compress at all (a format's magic bytes, then a keyed AES-CTR stream: fast and repeatable).
 * Nothing in it looks like a secret key, so the service's leak guard lets it through.
 */
const WORDS = (
  'the a publishing site page static folder upload revision visitor browser cache header agent deploy ' +
  'garden river harbour lantern meadow orchard pebble quarry saddle thistle velvet willow amber beacon ' +
  'cobalt drift ember fable glade hollow island juniper kestrel lumen marble nectar opal prism quill ' +
  'ridge summit tide umber vale wander yarrow zephyr morning evening travel recipe notes project ' +
  'design studio market local season festival library museum gallery coffee bakery repair workshop'
).split(' ');

const MAGIC: Readonly<Record<string, readonly number[]>> = {
  jpg: [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00],
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  webp: [0x52, 0x49, 0x46, 0x46, 0x00, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50],
  mp4: [0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32],
};

export function fileBytes(siteSeed: number, file: PlannedFile, siteFiles: readonly PlannedFile[]): Buffer {
  const random = seededRandom(deriveSeed(siteSeed, file.path));
  const extension = file.path.slice(file.path.lastIndexOf('.') + 1);
  if (file.path === '_redirects') return redirectsFile(siteFiles);
  if (extension === 'html') return htmlPage(random, file, siteFiles);
  if (extension === 'css') return Buffer.from(fill(file.size, (out) => cssRule(random, out)));
  if (extension === 'js') return Buffer.from(fill(file.size, (out) => jsFunction(random, out)));
  return opaqueBytes(siteSeed, file, MAGIC[extension] ?? []);
}

/** Text of exactly `size` bytes (ASCII), built from pieces until it is long enough. */
function fill(size: number, piece: (out: string[]) => void, head = '', tail = ''): string {
  const out: string[] = [head];
  let length = head.length;
  while (length < size - tail.length) {
    const before = out.length;
    piece(out);
    for (let i = before; i < out.length; i++) length += out[i]!.length;
  }
  return (out.join('').slice(0, Math.max(0, size - tail.length)) + tail).slice(0, Math.max(size, tail.length));
}

const word = (random: Random): string => WORDS[randomInt(random, 0, WORDS.length - 1)]!;

function sentence(random: Random): string {
  const words = Array.from({ length: randomInt(random, 6, 16) }, () => word(random));
  return `${words[0]!.charAt(0).toUpperCase()}${words.join(' ').slice(1)}. `;
}

function htmlPage(random: Random, file: PlannedFile, siteFiles: readonly PlannedFile[]): Buffer {
  const styles = siteFiles.filter((f) => f.path.endsWith('.css')).map((f) => `<link rel="stylesheet" href="/${f.path}">`);
  const scripts = siteFiles.filter((f) => f.path.endsWith('.js')).map((f) => `<script src="/${f.path}" defer></script>`);
  const images = siteFiles.filter((f) => f.kind === 'media').map((f) => f.path);
  const pages = siteFiles.filter((f) => f.kind === 'page').map((f) => f.path);
  const nav = pages.map((path) => `<a href="/${path.replace(/(index)?\.html$/, '')}">${path.replace(/\.html$/, '')}</a>`).join(' ');
  const head = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${word(random)} ${word(random)}</title>${styles.join('')}${scripts.join('')}</head>\n<body><nav>${nav}</nav><main>\n`;
  const tail = '</main></body></html>\n';
  return Buffer.from(
    fill(
      file.size,
      (out) => {
        out.push(`<h2>${sentence(random)}</h2>\n<p>`);
        for (let i = randomInt(random, 2, 6); i > 0; i--) out.push(sentence(random));
        out.push('</p>\n');
        if (images.length > 0 && random() < 0.3) out.push(`<img src="/${images[randomInt(random, 0, images.length - 1)]}" alt="${word(random)}">\n`);
      },
      head,
      tail,
    ),
  );
}

function cssRule(random: Random, out: string[]): void {
  const colour = () => `#${randomInt(random, 0, 0xffffff).toString(16).padStart(6, '0')}`;
  out.push(`.${word(random)}-${randomInt(random, 1, 99)} {\n  color: ${colour()};\n  margin: ${randomInt(random, 0, 32)}px ${randomInt(random, 0, 32)}px;\n`);
  out.push(`  font-size: ${randomInt(random, 10, 32)}px;\n  border: 1px solid ${colour()};\n}\n`);
}

function jsFunction(random: Random, out: string[]): void {
  const name = `${word(random)}${randomInt(random, 1, 999)}`;
  out.push(`export function ${name}(items, limit) {\n  const seen = new Map();\n  for (const item of items) {\n`);
  out.push(
    `    if (seen.size > limit) break;\n    seen.set(item.${word(random)}, (seen.get(item.${word(random)}) ?? 0) + ${randomInt(random, 1, 9)});\n  }\n  return seen;\n}\n`,
  );
}

function opaqueBytes(siteSeed: number, file: PlannedFile, magic: readonly number[]): Buffer {
  const key = createHash('sha256').update(`${siteSeed}:${file.path}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const bytes = cipher.update(Buffer.alloc(file.size));
  bytes.set(magic.slice(0, file.size));
  return bytes;
}

/** Netlify-style rules: old addresses of the site's pages, moved. */
function redirectsFile(siteFiles: readonly PlannedFile[]): Buffer {
  const pages = siteFiles.filter((f) => f.kind === 'page' && f.path !== 'index.html' && !f.path.endsWith('/index.html'));
  const lines = pages.slice(0, 4).map((f) => `/old/${f.path.replace(/\.html$/, '')} /${f.path.replace(/\.html$/, '')} 301`);
  return Buffer.from(`# moved pages\n${lines.join('\n')}\n/home / 301\n`);
}
