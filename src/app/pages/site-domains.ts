import { html } from 'hono/html';
import type { DomainView, SiteView } from '../../contract/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, fieldError, invalidAttrs, timeOf, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import type { AppResponse } from '../response.js';

/**
 * The site page's custom domains: each domain with its status and the DNS records to create,
 * and, for owners, forms to add, check, mark primary and remove. Every action is a POST to
 * `/sites/<name>/domains…` that redirects back to the site page.
 */

/** `localhost` and `*.localhost` (RFC 6761): names that only ever lead to this computer. */
const isLocalHost = (hostname: string): boolean => hostname === 'localhost' || hostname.endsWith('.localhost');

/** `sites.localhost` from `https://<name>.sites.localhost:8080`. */
const siteDomainOf = (site: SiteView): string => new URL(site.url).hostname.slice(site.name.length + 1);

/** What the add form shows again after a refusal. */
export interface DomainFormState {
  errors: FieldError[];
  domain?: string;
}

const STATUS_WORDS: Record<DomainView['status'], string> = {
  pending: 'Waiting for DNS records',
  active: 'Active',
  failed: 'Failed',
  suspended: 'Suspended',
  taken: 'In use by another site',
};

/** The section of the site page; `manage` is whether the person may change domains (owners). */
export function domainsSection(context: PageContext, deps: AppDeps, site: SiteView, manage: boolean, state: DomainFormState) {
  const domains = deps.ops.domains.list(context.caller, site.name).domains;
  const token = context.formToken;
  const action = (path: string, domain: string, label: string, style: string, extra = html``) =>
    html`<form method="post" action="/sites/${site.name}/domains/${path}">${csrfField(token)}<input type="hidden" name="domain" value="${domain}">${extra}<button type="submit" class="${style}">${label}</button></form>`;

  const items = domains.map(
    (domain) => html`<li class="domain">
  <h3>${domain.domain} <span class="tag">${STATUS_WORDS[domain.status]}</span>${domain.primary ? html` <span class="tag">Primary</span>` : ''}</h3>
  ${domain.reason ? html`<p>${domain.reason}</p>` : ''}
  ${domain.checked_at ? html`<p class="hint">Last checked ${timeOf(domain.checked_at)}.</p>` : ''}
  ${
    domain.status === 'active'
      ? ''
      : !manage
        ? html`<p>An owner of the site sets up its DNS records; it serves the site once they are found.</p>`
        : html`<p>Create these records at the DNS host of ${domain.domain}, then check them:</p>
<div class="table-wrap" role="region" tabindex="0" aria-label="DNS records for ${domain.domain}">
<table class="stack-table">
  <caption class="visually-hidden">DNS records for ${domain.domain}</caption>
  <thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
  <tbody>${domain.records.map((record) => html`<tr><td data-label="Type">${record.type}</td><td data-label="Name"><code>${record.name}</code></td><td data-label="Value"><code>${record.value}</code></td></tr>`)}</tbody>
</table></div>
${domain.records.some((record) => record.type === 'ALIAS') ? html`<p class="hint">ALIAS is also called ANAME or CNAME flattening. A DNS host without it takes A and AAAA records with the addresses of ${domain.target}.</p>` : ''}`
  }
  ${
    manage
      ? html`<div class="button-row">
  ${domain.status === 'active' ? '' : action('verify', domain.domain, `Check DNS records for ${domain.domain}`, 'button-secondary')}
  ${
    domain.primary
      ? action('primary', domain.domain, `Stop using ${domain.domain} as primary`, 'button-secondary', html`<input type="hidden" name="primary" value="0">`)
      : action('primary', domain.domain, `Make ${domain.domain} primary`, 'button-secondary', html`<input type="hidden" name="primary" value="1">`)
  }
  <form method="get" action="/sites/${site.name}/domains/remove"><input type="hidden" name="domain" value="${domain.domain}"><button type="submit" class="button-danger">Remove ${domain.domain}…</button></form>
</div>`
      : ''
  }
</li>`,
  );

  const local = isLocalHost(new URL(site.url).hostname);
  return html`<h2>Custom domains</h2>
${
  domains.length === 0
    ? html`<p>${site.name} is served only at its own address.</p>`
    : html`<p>Active domains serve this site${local ? '' : ' over HTTPS'}. Of <code>example.org</code> and <code>www.example.org</code>, the primary one is where the other redirects.</p><ul class="domains">${items}</ul>`
}
${
  local && (manage || domains.length > 0)
    ? html`<div class="panel" id="local-domains"><h3>This is a local install</h3><p>Its sites live under <code>${siteDomainOf(site)}</code>, a name that exists only on this computer: no DNS host on the internet can point a domain at it, and there is no certificate for HTTPS. A domain added here can be checked, but visitors reach it only once the server runs under real host names with a TLS terminator in front (${
        context.deps.config.publicUrls.docs
          ? html`<a href="${context.deps.config.publicUrls.docs}/operating#custom-domains-and-https">custom domains and HTTPS</a>`
          : 'see the operating guide'
      }).</p></div>`
    : ''
}
${
  manage
    ? html`<form method="post" action="/sites/${site.name}/domains" novalidate class="inline-form">
  ${csrfField(token)}
  <div class="field">
    <label for="domain">Domain</label>
    <p class="hint" id="domain-hint">A domain you own, such as www.example.org. You will be shown the DNS records to create.</p>
    ${fieldError(state.errors, 'domain')}
    <input id="domain" name="domain" required spellcheck="false" autocomplete="off" value="${state.domain ?? ''}" aria-describedby="domain-hint" ${invalidAttrs(state.errors, 'domain')}>
  </div>
  <button type="submit">Add domain</button>
</form>`
    : ''
}`;
}

/**
 * The domain actions. `showSite` renders the site page with the add form's error (a bad, taken or
 * capped domain); other refusals go to the app's error page.
 */
export function siteDomainRoutes(
  deps: AppDeps,
  showSite: (context: PageContext, name: string, domainState: DomainFormState, status: number) => Promise<AppResponse>,
): PageRoute[] {
  const { ops } = deps;
  const back = (name: string) => `/sites/${encodeURIComponent(name)}`;
  const run = (act: (context: PageContext, name: string, form: URLSearchParams) => Promise<AppResponse>) => async (context: PageContext) => {
    if (!context.person) return toSignIn(context);
    return act(context, context.request.params[0]!, formOf(context.request));
  };
  return [
    {
      method: 'POST',
      path: '/sites/{name}/domains',
      handle: run(async (context, name, form) => {
        const domain = (form.get('domain') ?? '').trim();
        try {
          const { view } = await ops.domains.add(context.caller, name, { domain });
          return redirectWithFlash(context, back(name), { notice: `${view.domain} was added. Create the DNS records shown for it, then check them.` });
        } catch (err) {
          const error = err as { code?: string; message: string };
          if (error.code === 'bad_request' || error.code === 'conflict' || error.code === 'limit') {
            return showSite(
              context,
              name,
              { errors: [{ field: 'domain', message: error.message }], domain },
              error.code === 'limit' ? 429 : error.code === 'conflict' ? 409 : 400,
            );
          }
          throw err;
        }
      }),
    },
    {
      method: 'POST',
      path: '/sites/{name}/domains/verify',
      handle: run(async (context, name, form) => {
        const view = await ops.domains.verify(context.caller, name, form.get('domain') ?? '');
        const notice =
          view.status === 'active' ? `${view.domain} is active.` : `${view.domain} is not active yet: ${view.reason ?? 'the records were not found'}`;
        return redirectWithFlash(context, back(name), { notice });
      }),
    },
    {
      method: 'POST',
      path: '/sites/{name}/domains/primary',
      handle: run(async (context, name, form) => {
        const primary = form.get('primary') === '1';
        const { view } = await ops.domains.add(context.caller, name, { domain: form.get('domain') ?? '', primary });
        return redirectWithFlash(context, back(name), {
          notice: primary ? `${view.domain} is now the primary domain.` : `${view.domain} is no longer the primary domain.`,
        });
      }),
    },
    {
      // Removing asks first, on a page of its own: the domain stops serving the site at once.
      method: 'GET',
      path: '/sites/{name}/domains/remove',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const wanted = (context.request.query.get('domain') ?? '').trim().toLowerCase();
        const domain = ops.domains.list(context.caller, name).domains.find((d) => d.domain === wanted);
        const backLink = { href: back(name), label: `Back to ${name}` };
        if (!domain) return messagePage(context, 404, 'No such domain', html`<p>${name} has no custom domain ${wanted}.</p>`, backLink);
        return page(context, {
          title: `Remove ${domain.domain} from ${name}`,
          current: 'sites',
          body: html`<h1>Remove ${domain.domain} from ${name}?</h1>
<p>${domain.domain} stops serving ${name} at once${domain.status === 'active' ? ': visitors who use it get an error page' : ''}. Adding it again later means creating and checking its DNS records again. The site itself and its own address do not change.</p>
<form method="post" action="/sites/${name}/domains/remove" class="button-row">
  ${csrfField(context.formToken)}
  <input type="hidden" name="domain" value="${domain.domain}">
  <button type="submit" class="button-danger">Remove ${domain.domain}</button>
  <a href="${back(name)}" class="button-secondary">Cancel</a>
</form>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/sites/{name}/domains/remove',
      handle: run(async (context, name, form) => {
        const removed = await ops.domains.remove(context.caller, name, form.get('domain') ?? '');
        return redirectWithFlash(context, back(name), { notice: `${removed.domain} was removed; it no longer serves this site.` });
      }),
    },
  ];
}
