import { html } from 'hono/html';

/**
 * The page shell and the small components every app page uses. Templates are hono's `html`:
 * every interpolated value is escaped unless wrapped in `raw`, which no value from a person or
 * a site ever is.
 */

export type Html = ReturnType<typeof html>;

export interface ShellOptions {
  title: string;
  /** Signed-in person's address: shows the account navigation and the sign-out button. */
  email?: string;
  /** Token for the sign-out form. */
  formToken: string;
  /** Which navigation entry is current. */
  current?: 'sites' | 'tokens' | 'billing';
  /** Shown at the top of the main content (a status message after an action). */
  notice?: string;
  body: Html;
  /** Short text for search engines and previews. */
  description?: string;
}

export function renderShell(options: ShellOptions): string {
  const { title, email, formToken, current, notice, body } = options;
  const link = (href: string, label: string, key: ShellOptions['current']) =>
    html`<li><a href="${href}" ${current === key ? html`aria-current="page"` : ''}>${label}</a></li>`;
  return String(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Plinth</title>
<meta name="description" content="${options.description ?? 'Plinth account: your sites, people, API tokens and plan.'}">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/style.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
  <a class="brand" href="/">Plinth</a>
  ${
    email
      ? html`<nav aria-label="Account">
    <ul class="nav-list">${link('/', 'Sites', 'sites')}${link('/tokens', 'API tokens', 'tokens')}${link('/billing', 'Plan and usage', 'billing')}</ul>
  </nav>
  <form class="sign-out" method="post" action="/logout">
    <input type="hidden" name="csrf" value="${formToken}">
    <span class="who">${email}</span>
    <button type="submit" class="button-link">Sign out</button>
  </form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
${body}
</main>
<footer class="site-footer"><p>Plinth publishes static sites from a folder.</p></footer>
</body>
</html>`);
}

export interface FieldError {
  /** The input's id, for the summary's link. */
  field: string;
  message: string;
}

/** GOV.UK-style error summary: a focusable box at the top linking to each field in error. */
export function errorSummary(errors: readonly FieldError[]): Html | string {
  if (errors.length === 0) return '';
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" data-autofocus>
  <h2 id="error-summary-title">There is a problem</h2>
  <ul>${errors.map((error) => html`<li><a href="#${error.field}">${error.message}</a></li>`)}</ul>
</div>`;
}

/** The message shown next to a field in error (the input refers to it with aria-describedby). */
export function fieldError(errors: readonly FieldError[], field: string): Html | string {
  const error = errors.find((e) => e.field === field);
  return error ? html`<p class="field-error" id="${field}-error"><span class="visually-hidden">Error:</span> ${error.message}</p>` : '';
}

/** Attributes of an input that may be in error. */
export function invalidAttrs(errors: readonly FieldError[], field: string): Html | string {
  return errors.some((e) => e.field === field) ? html`aria-invalid="true" aria-describedby="${field}-error"` : '';
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

/** A UTC time as people read it, in a <time> element. */
export function timeOf(iso: string | null | undefined): Html | string {
  if (!iso) return '—';
  const date = new Date(iso);
  const text = date.toLocaleString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
  return html`<time datetime="${iso}">${text} UTC</time>`;
}

/** `1 file`, `1,204 files`. */
export function fileCount(files: number): string {
  return `${files.toLocaleString('en-GB')} ${files === 1 ? 'file' : 'files'}`;
}
