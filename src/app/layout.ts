import { html } from 'hono/html';
import { renderPage, type AssetName, type Html, type PageAssets } from '../web/index.js';

/**
 * The page shell and the small components every app page uses. Templates are hono's `html`:
 * every interpolated value is escaped unless wrapped in `raw`, which no value from a person or
 * a site ever is.
 */

export type { Html, FieldError } from '../web/index.js';
export { errorSummary, fieldError, invalidAttrs } from '../web/index.js';

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
  /** The drop-to-publish script, on pages with a drop zone. */
  scripts?: readonly AssetName[];
  /** The docs host, linked from every page's footer. */
  docsUrl?: string;
}

const NAV_HREF = { sites: '/', tokens: '/tokens', billing: '/billing' } as const;

/** An app page in the shared shell, with the account navigation and sign-out when signed in. */
export function renderShell(assets: PageAssets, options: ShellOptions): string {
  const { email, formToken, current, notice, body } = options;
  return renderPage({
    title: options.title,
    description: options.description ?? 'Plinth account: your sites, people, API tokens and plan.',
    assets,
    nav: email
      ? {
          label: 'Account',
          items: [
            { href: '/', label: 'Sites' },
            { href: '/tokens', label: 'API tokens' },
            { href: '/billing', label: 'Plan and usage' },
          ],
          current: current ? NAV_HREF[current] : undefined,
        }
      : undefined,
    headerEnd: email
      ? html`<form class="sign-out" method="post" action="/logout">
    <input type="hidden" name="csrf" value="${formToken}">
    <span class="who">${email}</span>
    <button type="submit" class="button-link">Sign out</button>
  </form>`
      : '',
    scripts: options.scripts,
    main: html`${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
${body}`,
    footer: options.docsUrl
      ? html`<p>Plinth publishes static sites from a folder. Guides, the API and the agent guide: <a href="${options.docsUrl}/">Plinth docs</a>.</p>`
      : undefined,
  });
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

/** A role with its article: `an owner`, `an editor`, `a viewer`. */
export function roleWithArticle(role: string): string {
  return `${/^[aeiou]/i.test(role) ? 'an' : 'a'} ${role}`;
}
