import { readdirSync, readFileSync } from 'node:fs';
import type { PublicUrls } from '../config.js';
import { fillFacts } from './facts.js';
import { renderMarkdown, type TocEntry } from './markdown.js';

/**
 * The guides: one Markdown file each in `docs/` at the top of the repository, read and rendered
 * once at start-up. Adding a guide is adding a file; its front matter places it in the navigation
 * and in `llms.txt`.
 *
 * ```
 * ---
 * title: Publishing
 * summary: One sentence for llms.txt and the landing page.
 * section: Guides
 * order: 20
 * ---
 * ```
 */

export interface Guide {
  /** Address without extension: `/publishing` and `/publishing.md`. `index` is the landing page. */
  slug: string;
  title: string;
  summary: string;
  section: string;
  order: number;
  /** The Markdown as served to agents: placeholders filled, links absolute, test notes removed. */
  markdown: string;
  /** The article HTML (trusted: rendered from our own Markdown). */
  html: string;
  toc: TocEntry[];
}

// docs/ is two folders above both src/docs and dist/docs.
export const GUIDE_DIR = new URL('../../docs/', import.meta.url);

const SLUG = /^[a-z0-9][a-z0-9-]*$/;
const FRONT_MATTER = /^---\n([\s\S]*?)\n---\n/;
/** Notes for the example runner (`<!-- expect: 409 -->` …); invisible in a rendered page, noise in the Markdown. */
const TEST_NOTE = /^<!--\s*(?:expect|schema|skip)\b[\s\S]*?-->[ \t]*\n/gm;

// The guides are written for a local server with default settings; a deployment shows its own
// public addresses instead. Longest first, so `api.localhost` is not read as `localhost`.
// A site address is written with a real name, `<name>`, a shell variable (`$SITE`, `${SITE}`,
// quoted as `'$SITE'` inside a quoted URL), or `…` standing for `name.`; a preview's number before `--`.
const LOCAL_SITE = /http:\/\/((?:(?:\d+|<number>)--)?(?:(?:[a-z0-9-]+|<name>|'?\$[A-Z_]+'?|'?\$\{[A-Z_]+\}'?)\.|…))sites\.localhost:8080/g;
// Operators' examples that connect to the port itself (`curl … http://127.0.0.1:8080/`).
const LOCAL_PORT = /\b127\.0\.0\.1:8080\b/g;
const LOCAL_URLS: ReadonlyArray<[string, keyof PublicUrls]> = [
  ['http://api.localhost:8080', 'api'],
  ['http://app.localhost:8080', 'app'],
  ['http://mcp.localhost:8080', 'mcp'],
  ['http://localhost:8080', 'docs'],
];

export function loadGuides(options: { facts: Readonly<Record<string, string>>; urls: PublicUrls; port?: number; dir?: URL }): Guide[] {
  const dir = options.dir ?? GUIDE_DIR;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
  const guides = files.map((file) => parseGuide(file, readFileSync(new URL(file, dir), 'utf8'), options.facts, options.urls, options.port));
  return guides.sort((a, b) => a.order - b.order || a.slug.localeCompare(b.slug));
}

export function parseGuide(file: string, source: string, facts: Readonly<Record<string, string>>, urls: PublicUrls, port?: number): Guide {
  const slug = file.replace(/\.md$/, '');
  if (!SLUG.test(slug)) throw new Error(`docs/${file}: file names are lower-case words joined by hyphens`);
  const text = source.replace(/\r\n/g, '\n');
  const front = FRONT_MATTER.exec(text);
  if (!front) throw new Error(`docs/${file}: starts with front matter (--- title, summary, section, order ---)`);
  const meta = Object.fromEntries(
    front[1]!.split('\n').map((line) => {
      const colon = line.indexOf(':');
      if (colon < 1) throw new Error(`docs/${file}: front matter line "${line}" is not "key: value"`);
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    }),
  );
  for (const key of ['title', 'summary', 'section', 'order']) {
    if (!meta[key]) throw new Error(`docs/${file}: front matter needs "${key}"`);
  }
  const order = Number(meta.order);
  if (!Number.isFinite(order)) throw new Error(`docs/${file}: order must be a number`);

  const body = localizeUrls(fillFacts(text.slice(front[0].length), facts, `docs/${file}`), urls, port);
  const readable = body.replace(TEST_NOTE, '');
  const markdown = absoluteLinks(readable, urls.docs).trimStart();
  const rendered = renderMarkdown(pageLinks(readable));
  return { slug, title: meta.title!, summary: meta.summary!, section: meta.section!, order, markdown, html: rendered.html, toc: rendered.toc };
}

/** Guide text with this deployment's public addresses in place of the local defaults. */
export function localizeUrls(text: string, urls: PublicUrls, port?: number): string {
  let out = text.replace(LOCAL_SITE, (_whole, prefix: string) =>
    prefix.endsWith('…') && urls.site.includes('{name}.') ? urls.site.replace('{name}.', prefix) : urls.site.replace('{name}', prefix.replace(/\.$/, '')),
  );
  for (const [local, key] of LOCAL_URLS) out = out.split(local).join(urls[key]);
  return port === undefined || port === 8080 || port === 0 ? out : out.replace(LOCAL_PORT, `127.0.0.1:${port}`);
}

// Guides link to each other as `publishing.md#anchor`, which also works when browsing docs/.
const GUIDE_LINK = /\]\(([a-z0-9][a-z0-9-]*)\.md(#[^)\s]*)?\)/g;
const FILE_LINK = /\]\((llms\.txt|llms-full\.txt|openapi\.json)\)/g;

/** For agents: every link absolute, to the Markdown version. */
function absoluteLinks(text: string, docsUrl: string): string {
  return text
    .replace(GUIDE_LINK, (_whole, slug: string, hash = '') => `](${docsUrl}/${slug}.md${hash})`)
    .replace(FILE_LINK, (_whole, file: string) => `](${docsUrl}/${file})`);
}

/** For the HTML pages: links to the other pages. */
function pageLinks(text: string): string {
  return text
    .replace(GUIDE_LINK, (_whole, slug: string, hash = '') => `](/${slug === 'index' ? '' : slug}${hash})`)
    .replace(FILE_LINK, (_whole, file: string) => `](/${file})`);
}
