// Deterministic bench corpus: one big site ("bench-main") and many small sites, as path → bytes maps.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const MAIN_SITE = 'bench-main';
export const siteName = (i) => `s${String(i).padStart(5, '0')}`;
export const pagePath = (i) => `pages/p${String(i).padStart(4, '0')}.html`;

// Seeded PRNG so every run publishes the same bytes (sizes and text are stable across runs).
function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'static site publish folder address serve cache header request page script style image font token deploy revision blob content hash index route thread worker kernel socket buffer stream'.split(
    ' ',
  );

function prose(rand, bytes) {
  let s = '';
  while (s.length < bytes) s += WORDS[Math.floor(rand() * WORDS.length)] + (rand() < 0.1 ? '.\n' : ' ');
  return s.slice(0, bytes);
}

/** An HTML page of exactly `bytes` bytes (ASCII only, so chars = bytes). */
function htmlPage(title, extraLine, bytes, rand) {
  const head = `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n<link rel="stylesheet" href="/style.css">\n</head>\n<body>\n<h1>${title}</h1>\n<p>${extraLine}</p>\n<p>`;
  const tail = `</p>\n<script src="/app.js"></script>\n</body>\n</html>\n`;
  return Buffer.from(head + prose(rand, Math.max(0, bytes - head.length - tail.length)) + tail);
}

function script(bytes, rand) {
  let s = '// bench script\n';
  for (let i = 0; s.length < bytes; i++) {
    s += `export function f${i}(a, b) { return a * ${Math.floor(rand() * 1000)} + b; } // ${WORDS[i % WORDS.length]}\n`;
  }
  return Buffer.from(s.slice(0, bytes - 1) + '\n');
}

/** Random bytes behind a real PNG signature and IHDR start: incompressible, like a photo. */
function png(bytes, rand) {
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buf[i] = Math.floor(rand() * 256);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(buf, 0);
  return buf;
}

/** Incompressible bytes of a video file, filled fast (32-bit words). */
function media(bytes, seed) {
  const words = new Uint32Array(Math.ceil(bytes / 4));
  const rand = mulberry32(seed);
  for (let i = 0; i < words.length; i++) words[i] = rand() * 4294967296;
  return Buffer.from(words.buffer, 0, bytes);
}

/**
 * bench-main: 2 KB index.html, 60 KB app.js, 200 KB hero.png, a 5 MB and a 50 MB video,
 * `pageCount` pages of 1–3 KB.
 */
export function makeMainSite(pageCount) {
  const rand = mulberry32(42);
  const files = new Map();
  files.set('index.html', htmlPage('Bench main', 'The 2 KB page.', 2048, rand));
  files.set('app.js', script(60 * 1024, rand));
  files.set('hero.png', png(200 * 1024, rand));
  files.set('media/clip.mp4', media(5 * 1024 * 1024, 5));
  files.set('media/film.mp4', media(50 * 1024 * 1024, 50));
  files.set('style.css', Buffer.from('body{font:16px/1.5 system-ui;margin:2rem auto;max-width:40rem}\nh1{font-size:2rem}\n'));
  for (let i = 0; i < pageCount; i++) {
    files.set(pagePath(i), htmlPage(`Page ${i}`, `Page number ${i}.`, 1024 + Math.floor(rand() * 2048), rand));
  }
  return files;
}

/** Files every small site shares byte-for-byte (dedup keeps the store small). */
export function makeSharedSmallFiles() {
  const rand = mulberry32(7);
  return {
    'about.html': htmlPage('About', 'About this site.', 1000, rand),
    'style.css': Buffer.from(`:root{--fg:#222;--bg:#fff}\nbody{color:var(--fg);background:var(--bg);font:16px/1.5 system-ui}\n/* ${prose(rand, 800)} */\n`),
    'app.js': script(2048, rand),
    'logo.svg': Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#2b6cb0"/><path d="M16 44h32v4H16zM20 20h24v20H20z" fill="#fff"/></svg>\n',
    ),
  };
}

/** Small site `i`: 5 files; index.html carries a unique line so 10,000 sites are 10,000 distinct blobs. */
export function makeSmallSite(i, shared) {
  const name = siteName(i);
  const files = new Map(Object.entries(shared));
  files.set('index.html', htmlPage(`Site ${name}`, `Unique line for ${name}: ${i * 7919}.`, 1200, mulberry32(1000 + i)));
  return files;
}

/** Writes a site's files under `dir` for nginx to serve. */
export function writeSite(dir, files) {
  for (const [path, bytes] of files) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
  }
}
