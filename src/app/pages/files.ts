import { readFile } from 'node:fs/promises';
import { html } from 'hono/html';
import type { FileListView } from '../../contract/index.js';
import { formatBytes } from '../../sites/index.js';
import { page, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { fileCount } from '../layout.js';
import type { AppResponse } from '../response.js';

/**
 * The file browser of a site's live revision (the app's view of `GET /v1/sites/:name/files`):
 * every path with its size, and each file's facts and, for text, its content. Content is only
 * ever shown as escaped text in <pre>: the app host never serves a site's bytes as a page, so a
 * site's HTML or SVG cannot run with the app's cookies.
 */

/** Rows per page of the listing. */
const FILES_PAGE = 200;
/** Text files up to this size are shown; larger ones are opened on the site. */
const MAX_SHOWN_BYTES = 256 * 1024;
const TEXT_TYPE = /^(text\/|application\/(json|javascript|xml|manifest\+json|ld\+json|xhtml\+xml)|image\/svg\+xml)/i;

const siteHref = (name: string): string => `/sites/${encodeURIComponent(name)}`;
const fileHref = (name: string, path: string): string => `${siteHref(name)}/files/${path.split('/').map(encodeURIComponent).join('/')}`;

export function fileRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;

  async function listing(context: PageContext): Promise<AppResponse> {
    const name = context.request.params[0]!;
    const site = await ops.sites.get(context.caller, name);
    if (!('name' in site)) throw new Error('claim poll for a signed-in person');
    const list: FileListView = ops.files.list(context.caller, name);
    const files = [...list.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const pages = Math.max(1, Math.ceil(files.length / FILES_PAGE));
    const at = Math.min(pages, Math.max(1, Number.parseInt(context.request.query.get('page') ?? '1', 10) || 1));
    const shown = files.slice((at - 1) * FILES_PAGE, at * FILES_PAGE);
    const total = files.reduce((sum, file) => sum + file.size, 0);
    const rows = shown.map(
      (file) => html`<tr>
  <th scope="row"><a href="${fileHref(site.name, file.path)}">${file.path}</a></th>
  <td>${formatBytes(file.size)}</td>
</tr>`,
    );
    const number = site.live_revision?.number;
    // Two columns fit a phone as a table (the path wraps anywhere, plinth.css), so this one does not
    // stack like the app's wider tables; test/app/tables.browser.test.ts checks it at 390 px.
    const body = html`<p class="breadcrumb"><a href="/">Your sites</a> › <a href="${siteHref(site.name)}">${site.name}</a></p>
<h1>Files of ${site.name}</h1>
<p>The live revision${number ? html` (#${number})` : ''}: ${fileCount(files.length)}, ${formatBytes(total)}. <a href="${site.url}" rel="noopener">Visit the site</a></p>
<div class="table-wrap" role="region" tabindex="0" aria-label="Files of the live revision">
<table class="files-table">
  <caption class="visually-hidden">Files of the live revision of ${site.name}</caption>
  <thead><tr><th scope="col">Path</th><th scope="col">Size</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>
${
  pages > 1
    ? html`<nav aria-label="Pages of files"><p class="button-row">${at > 1 ? html`<a href="?page=${at - 1}">Previous ${FILES_PAGE}</a>` : ''} <span>Page ${at} of ${pages}</span> ${
        at < pages ? html`<a href="?page=${at + 1}">Next ${FILES_PAGE}</a>` : ''
      }</p></nav>`
    : ''
}`;
    return page(context, { title: `Files of ${site.name}`, current: 'sites', body });
  }

  async function oneFile(context: PageContext): Promise<AppResponse> {
    const name = context.request.params[0]!;
    const path = context.request.params[1]!;
    const site = await ops.sites.get(context.caller, name);
    if (!('name' in site)) throw new Error('claim poll for a signed-in person');
    const file = await ops.files.find(context.caller, name, path);
    const text = TEXT_TYPE.test(file.entry.type) && file.entry.size <= MAX_SHOWN_BYTES;
    const content = text ? (await readFile(file.blobPath)).toString('utf8') : undefined;
    const address = `${site.url}/${file.path.split('/').map(encodeURIComponent).join('/')}`;
    const body = html`<p class="breadcrumb"><a href="/">Your sites</a> › <a href="${siteHref(site.name)}">${site.name}</a> › <a href="${siteHref(site.name)}/files">Files</a></p>
<h1>${file.path}</h1>
<dl class="facts">
  <dt>Size</dt><dd>${formatBytes(file.entry.size)}</dd>
  <dt>Type</dt><dd>${file.entry.type}</dd>
  <dt>SHA-256</dt><dd><code>${file.entry.sha256}</code></dd>
  <dt>Revision</dt><dd><code>${file.revision}</code></dd>
</dl>
<p><a class="button-secondary" href="${address}" rel="noopener">Open on the site</a></p>
${
  content !== undefined
    ? html`<pre class="file-content" tabindex="0" aria-label="Content of ${file.path}"><code>${content}</code></pre>`
    : html`<p>${TEXT_TYPE.test(file.entry.type) ? `This file is larger than ${formatBytes(MAX_SHOWN_BYTES)}, so it is not shown here.` : 'This is not a text file, so it is not shown here.'} Open it on the site instead.</p>`
}`;
    return page(context, { title: `${file.path} · ${site.name}`, current: 'sites', body });
  }

  return [
    { method: 'GET', path: '/sites/{name}/files', handle: async (context) => (context.person ? listing(context) : toSignIn(context)) },
    { method: 'GET', path: '/sites/{name}/files/{path...}', handle: async (context) => (context.person ? oneFile(context) : toSignIn(context)) },
  ];
}
