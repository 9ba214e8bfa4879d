import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The pages the serving A/B (serve-ab.mjs) and the instruction count (serve-instructions.mjs)
 * serve, byte for byte: 2,048 bytes each, as bench:serve's page.
 */
export const benchPage = (title) => {
  const head = `<!doctype html><html><head><title>${title}</title></head><body>`;
  const tail = '</body></html>\n';
  return head + '<p>bench text for a small page</p>'.repeat(60).slice(0, 2048 - head.length - tail.length) + tail;
};

export const pagePath = (i) => `pages/p${String(i).padStart(4, '0')}.html`;

/**
 * Writes the index page into `work`, and the index with `pageCount` pages into `work`/ceiling-pages
 * for the ceiling that rotates over distinct bodies (CEILING_PAGES_DIR).
 */
export function writeServePages(work, pageCount) {
  const indexFile = join(work, 'index.html');
  writeFileSync(indexFile, benchPage('Bench'));
  const pagesDir = join(work, 'ceiling-pages');
  mkdirSync(join(pagesDir, 'pages'), { recursive: true });
  writeFileSync(join(pagesDir, 'index.html'), benchPage('Bench'));
  for (let i = 0; i < pageCount; i++) writeFileSync(join(pagesDir, pagePath(i)), benchPage(`Page ${i}`));
  return { indexFile, pagesDir };
}
