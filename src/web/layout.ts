import { html, raw } from 'hono/html';
import type { AssetName, PageAssets } from './assets.js';

/**
 * The page shell and the small components shared by the docs and the account app. Templates are
 * hono's `html`: every interpolated value is escaped unless wrapped in `raw`, which only our own
 * rendered Markdown ever is.
 */

/** What `html` returns; none of our templates interpolate promises, so it is always a string. */
export type Html = ReturnType<typeof html>;

export interface NavItem {
  href: string;
  label: string;
}

export interface PageOptions {
  /** The page's own title; the browser tab shows `<title> · Plinth`. */
  title: string;
  /** Short text for search engines and link previews. */
  description?: string;
  assets: PageAssets;
  /** Header navigation (e.g. the docs' sections or the account's pages). */
  nav?: { label: string; items: readonly NavItem[]; current?: string };
  /** Extra content at the end of the header (e.g. a sign-out form). */
  headerEnd?: Html | string;
  /** Where the brand link goes. */
  homeHref?: string;
  /** Alternative versions of this page, e.g. its Markdown for agents. */
  alternates?: ReadonlyArray<{ type: string; href: string; title?: string }>;
  canonical?: string;
  /** The content of `<main>`. */
  main: Html | string;
  footer?: Html | string;
  /** Scripts of ours this page needs besides plinth.js (the app's drop-to-publish script). */
  scripts?: readonly AssetName[];
}

export function renderPage(options: PageOptions): string {
  const { assets, nav } = options;
  const title = options.title === 'Plinth' ? 'Plinth' : `${options.title} · Plinth`;
  return String(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${options.description ? html`<meta name="description" content="${options.description}">` : ''}
${options.canonical ? html`<link rel="canonical" href="${options.canonical}">` : ''}
${(options.alternates ?? []).map((alt) => html`<link rel="alternate" type="${alt.type}" href="${alt.href}"${alt.title ? html` title="${alt.title}"` : ''}>\n`)}
<link rel="icon" href="${assets.href('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.href('plinth.css')}">
<script src="${assets.href('plinth.js')}" defer></script>
${(options.scripts ?? []).map((name) => html`<script src="${assets.href(name)}" defer></script>\n`)}
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
  <a class="brand" href="${options.homeHref ?? '/'}">Plinth</a>
  ${nav ? navigation(nav.label, nav.items, nav.current) : ''}
  ${options.headerEnd ?? ''}
</header>
<main id="main" tabindex="-1">
${options.main}
</main>
<footer class="site-footer">${options.footer ?? html`<p>Plinth publishes static sites from a folder.</p>`}</footer>
</body>
</html>
`);
}

/** A `<nav>` with a list of links; the current one is marked for screen readers and styled. */
export function navigation(label: string, items: readonly NavItem[], current?: string): Html {
  return html`<nav aria-label="${label}">
    <ul class="nav-list">${items.map(
      (item) => html`<li><a href="${item.href}"${item.href === current ? raw(' aria-current="page"') : ''}>${item.label}</a></li>`,
    )}</ul>
  </nav>`;
}

export interface FieldError {
  /** The input's id, for the summary's link. */
  field: string;
  message: string;
}

/**
 * The GOV.UK error summary: a box at the top of the form that takes the focus (plinth.js) and
 * links to each field in error. `role="alert"` announces it even without the script.
 */
export function errorSummary(errors: readonly FieldError[]): Html | string {
  if (errors.length === 0) return '';
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" data-autofocus>
  <h2 id="error-summary-title">There is a problem</h2>
  <ul>${errors.map((error) => html`<li><a href="#${error.field}">${error.message}</a></li>`)}</ul>
</div>`;
}

/** The message next to a field in error; the input points at it with `aria-describedby`. */
export function fieldError(errors: readonly FieldError[], field: string): Html | string {
  const error = errors.find((e) => e.field === field);
  return error ? html`<p class="field-error" id="${field}-error"><span class="visually-hidden">Error:</span> ${error.message}</p>` : '';
}

/** Attributes for an input that may be in error. */
export function invalidAttrs(errors: readonly FieldError[], field: string): Html | string {
  return errors.some((e) => e.field === field) ? html`aria-invalid="true" aria-describedby="${field}-error"` : '';
}
