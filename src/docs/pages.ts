import { html, raw } from 'hono/html';
import { renderPage, type Html, type PageAssets } from '../web/index.js';
import type { Guide } from './guides.js';
import { slugify } from './markdown.js';

/** The docs host's HTML: the landing page, one page per guide, and the not-found page. */

export interface PageContext {
  guides: readonly Guide[];
  assets: PageAssets;
  /** Absolute address of the docs, for canonical links. */
  docsUrl: string;
  /** Absolute address of the account app, where people sign in. */
  appUrl: string;
}

const HEADER_NAV = [
  { href: '/quick-start', label: 'Quick start' },
  { href: '/agent-guide', label: 'Agent guide' },
  { href: '/sites-api', label: 'API' },
  { href: '/cli', label: 'CLI' },
  { href: '/errors', label: 'Errors' },
];

function footer(context: PageContext): Html {
  return html`<p>Plinth publishes static sites from a folder. Your sites, people, API tokens and plan: <a href="${context.appUrl}/">the account app</a>. For agents: <a href="/llms.txt">llms.txt</a>, <a href="/llms-full.txt">llms-full.txt</a>, <a href="/openapi.json">openapi.json</a>.</p>`;
}

/** The way from the docs to the account: where people sign in, claim sites and make API tokens. */
function signIn(context: PageContext): Html {
  return html`<a class="header-end" href="${context.appUrl}/login">Sign in</a>`;
}

/** Guides grouped by section, in the order their first guide comes. */
export function sections(guides: readonly Guide[]): Array<{ section: string; guides: Guide[] }> {
  const groups = new Map<string, Guide[]>();
  for (const guide of guides) {
    if (guide.slug === 'index') continue;
    const list = groups.get(guide.section) ?? [];
    list.push(guide);
    groups.set(guide.section, list);
  }
  return [...groups].map(([section, list]) => ({ section, guides: list }));
}

function sideNav(context: PageContext, current: string): Html {
  return html`<nav class="doc-nav" id="doc-guides" aria-label="Guides">
  ${sections(context.guides).map(
    ({ section, guides }) => html`<h2 id="guides-${slugify(section)}">${section}</h2>
  <ul>${guides.map((guide) => html`<li><a href="/${guide.slug}"${guide.slug === current ? raw(' aria-current="page"') : ''}>${guide.title}</a></li>`)}</ul>`,
  )}
</nav>`;
}

function tableOfContents(guide: Guide): Html | string {
  if (guide.toc.length < 2) return '';
  // h3 entries nest under the h2 before them.
  const items: Array<{ id: string; text: string; children: Array<{ id: string; text: string }> }> = [];
  for (const entry of guide.toc) {
    if (entry.depth === 2 || items.length === 0) items.push({ id: entry.id, text: entry.text, children: [] });
    else items.at(-1)!.children.push({ id: entry.id, text: entry.text });
  }
  return html`<nav class="toc" id="doc-contents" aria-label="On this page">
  <h2 id="doc-contents-title">On this page</h2>
  <ul>${items.map(
    (item) =>
      html`<li><a href="#${item.id}">${item.text}</a>${
        item.children.length > 0 ? html`<ul>${item.children.map((child) => html`<li><a href="#${child.id}">${child.text}</a></li>`)}</ul>` : ''
      }</li>`,
  )}</ul>
</nav>`;
}

/** On a phone the guides and the page index come after the article; these links lead down to them. */
function jumpLinks(guide: Guide): Html {
  return html`<p class="doc-jump">${guide.toc.length >= 2 ? html`<a href="#doc-contents">On this page</a> · ` : ''}<a href="#doc-guides">All guides</a></p>`;
}

export function guidePage(context: PageContext, guide: Guide): string {
  // The jump links go right under the title.
  const h1End = guide.html.indexOf('</h1>');
  const titleEnd = h1End === -1 ? 0 : h1End + '</h1>'.length;
  const main = html`<div class="doc">
${sideNav(context, guide.slug)}
${tableOfContents(guide)}
<article class="doc-article">
${raw(guide.html.slice(0, titleEnd))}
${jumpLinks(guide)}
${raw(guide.html.slice(titleEnd))}
<p class="page-meta">This page in Markdown, for agents and editors: <a href="/${guide.slug}.md">${guide.slug}.md</a>.</p>
</article>
</div>`;
  return renderPage({
    title: guide.title,
    description: guide.summary,
    assets: context.assets,
    nav: { label: 'Main', items: HEADER_NAV, current: `/${guide.slug}` },
    headerEnd: signIn(context),
    canonical: `${context.docsUrl}/${guide.slug}`,
    alternates: [{ type: 'text/markdown', href: `/${guide.slug}.md`, title: 'Markdown' }],
    main,
    footer: footer(context),
  });
}

export function landingPage(context: PageContext, landing: Guide): string {
  const main = html`<div class="hero">
${raw(landing.html)}
</div>
${sections(context.guides).map(
  ({ section, guides }) => html`<h2 id="${slugify(section)}">${section}</h2>
<ul class="cards">${guides.map((guide) => html`<li><a href="/${guide.slug}">${guide.title}</a><p>${guide.summary}</p></li>`)}</ul>`,
)}`;
  return renderPage({
    title: 'Plinth',
    description: landing.summary,
    assets: context.assets,
    nav: { label: 'Main', items: HEADER_NAV, current: '/' },
    headerEnd: signIn(context),
    canonical: `${context.docsUrl}/`,
    alternates: [
      { type: 'text/markdown', href: '/index.md', title: 'Markdown' },
      { type: 'text/plain', href: '/llms.txt', title: 'llms.txt' },
    ],
    main,
    footer: footer(context),
  });
}

export function notFoundPage(context: PageContext, path: string): string {
  const main = html`<div class="doc">
${sideNav(context, '')}
<article class="doc-article">
<h1>Page not found</h1>
<p>There is no page at <code>${path}</code>. The guides are listed beside this text, and on the <a href="/">start page</a>.</p>
</article>
</div>`;
  return renderPage({
    title: 'Page not found',
    assets: context.assets,
    nav: { label: 'Main', items: HEADER_NAV },
    headerEnd: signIn(context),
    main,
    footer: footer(context),
  });
}
