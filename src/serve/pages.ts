/**
 * The plain pages the serving host answers with when a site has nothing of its own to show
 * (SPEC 4.5.2, 4.5.7). Self-contained: inline CSS, no script, no fonts or images to fetch, so they
 * render under any network condition and leak no request to third parties.
 */
import { escapeHtml } from '../rules/index.js';

export type StatusPageCode = 400 | 404 | 405 | 410 | 414 | 416 | 451 | 500 | 503;
export type StatusPageOptions = { siteName?: string; pageGone?: boolean; revisionGone?: boolean };

type PageText = {
  title: string;
  /** The explanation when we do not know (or must not trust) which site was asked for. */
  generic: string;
  /** The explanation naming the site; `{site}` is replaced by the escaped name. */
  named: string;
};

const TEXTS: Readonly<Record<StatusPageCode, PageText>> = {
  400: {
    title: 'Bad request',
    generic: 'This address could not be understood. Check the link and try again.',
    named: 'This address on {site} could not be understood. Check the link and try again.',
  },
  404: {
    title: 'Page not found',
    generic: 'Nothing is published here: there is no page or site with this address.',
    named: 'There is no page at this address on {site}.',
  },
  405: {
    title: 'Method not allowed',
    generic: 'Published sites can only be read, with GET or HEAD requests.',
    named: '{site} can only be read, with GET or HEAD requests.',
  },
  410: {
    title: 'Site no longer available',
    generic: 'This site has expired or was deleted by its owner.',
    named: '{site} has expired or was deleted by its owner.',
  },
  414: {
    title: 'Address too long',
    generic: 'This address is longer than the server accepts.',
    named: 'This address on {site} is longer than the server accepts.',
  },
  416: {
    title: 'Range not satisfiable',
    generic: 'The requested part of this file is outside its length.',
    named: 'The requested part of this file on {site} is outside its length.',
  },
  451: {
    title: 'Site taken down',
    generic: 'This site was taken down after a report of abuse.',
    named: '{site} was taken down after a report of abuse.',
  },
  500: {
    title: 'Something went wrong',
    generic: 'Something went wrong on our side. Please try again in a moment.',
    named: 'Something went wrong on our side while serving {site}. Please try again in a moment.',
  },
  503: {
    title: 'Temporarily unavailable',
    generic: 'The service is busy right now. Please try again in a moment.',
    named: 'The service is busy right now, so {site} cannot be shown. Please try again in a moment.',
  },
};

// A page a site's `_redirects` marks as gone (410), rather than the whole site.
const PAGE_GONE: PageText = {
  title: 'Page gone',
  generic: 'This page was removed and is not coming back.',
  named: 'This page of {site} was removed and is not coming back.',
};

// The preview of a revision its owner deleted (410), rather than the whole site.
const REVISION_GONE: PageText = {
  title: 'Revision deleted',
  generic: 'This revision was deleted by its owner; its preview is not coming back.',
  named: 'This revision of {site} was deleted by its owner; its preview is not coming back.',
};

const STYLE =
  'body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;' +
  'background:#f6f6f4;color:#1d1d1f;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
  'main{max-width:32rem;padding:2rem}' +
  'p.code{margin:0;color:#8a8a8e;font-weight:600;letter-spacing:.05em}' +
  'h1{margin:.25rem 0 .75rem;font-size:1.75rem;line-height:1.2}' +
  'p{margin:0}';

function renderPage(status: StatusPageCode, siteName: string | undefined, gone: Pick<StatusPageOptions, 'pageGone' | 'revisionGone'> = {}): Buffer {
  const text = status !== 410 ? TEXTS[status] : gone.pageGone ? PAGE_GONE : gone.revisionGone ? REVISION_GONE : TEXTS[status];
  const explanation =
    siteName === undefined
      ? escapeHtml(text.generic)
      : // A replacer function, so `$&` or `$'` in a name is not read as a replacement pattern.
        escapeHtml(text.named).replace('{site}', () => `<strong>${escapeHtml(siteName)}</strong>`);
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    // Error pages are not content: keep them out of search results for the site's address.
    '<meta name="robots" content="noindex">' +
    `<title>${status} ${escapeHtml(text.title)}</title><style>${STYLE}</style></head>` +
    `<body><main><p class="code">${status}</p><h1>${escapeHtml(text.title)}</h1>` +
    `<p>${explanation}</p></main></body></html>\n`;
  return Buffer.from(html, 'utf8');
}

// Only the unnamed pages are cached. Names come from the Host header, so a cache keyed by name
// would grow with every hostile host an attacker sends; rendering a named page is a few string
// concatenations anyway.
const unnamedPages = new Map<StatusPageCode, Buffer>();

export function statusPage(status: StatusPageCode, options: StatusPageOptions = {}): Buffer {
  if (options.siteName !== undefined || options.pageGone || options.revisionGone) return renderPage(status, options.siteName, options);
  let page = unnamedPages.get(status);
  if (page === undefined) {
    page = renderPage(status, undefined);
    unnamedPages.set(status, page);
  }
  return page;
}
