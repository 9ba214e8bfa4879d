import { html } from 'hono/html';
import { ANONYMOUS_LIFETIME_MS, PLAN_LIMITS } from '../../rules/index.js';
import type { SiteView } from '../../contract/index.js';
import { formatBytes, type ConnectionView, type PlanRow, type TokenView } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, invalidAttrs, timeOf, type FieldError, type Html } from '../layout.js';
import { eventTable } from './event-log.js';
import { formOf } from '../request.js';
import { redirect, type AppResponse } from '../response.js';
import { dropZone } from './publish.js';

/** The signed-in person's own pages: their sites, API tokens, and plan with usage. */
export function accountRoutes(deps: AppDeps): PageRoute[] {
  const { ops, config } = deps;
  const api = config.publicUrls.api;

  function sitesPage(context: PageContext): AppResponse {
    const cursor = context.request.query.get('cursor') ?? undefined;
    const list = ops.sites.list(context.caller, { limit: 100, cursor });
    // On a phone each row becomes a card whose cells carry their column's name (plinth.css).
    const rows = list.sites.map(
      (site: SiteView) => html`<tr>
  <th scope="row"><a href="/sites/${site.name}">${site.name}</a></th>
  <td data-label="Address"><a href="${site.url}" rel="noopener">${site.url.replace(/^https?:\/\//, '')}</a></td>
  <td data-label="Your role">${site.role}</td>
  <td data-label="Plan">${planTitle(site.plan)}</td>
  <td data-label="Live revision">${site.live_revision ? html`#${site.live_revision.number}` : '—'}</td>
  <td data-label="Last deploy">${timeOf(site.live_revision?.created_at)}</td>
  <td data-label="Expires">${site.expires_at ? timeOf(site.expires_at) : 'Never'}</td>
  <td class="row-actions"><a class="button-secondary" href="${site.url}" rel="noopener">Visit<span class="visually-hidden"> ${site.name}</span></a></td>
</tr>`,
    );
    const drop = dropZone(context, {
      action: '/publish',
      heading: 'Publish a new site',
      lead: html`Drop a folder or an archive: it becomes a new site in your account, live at once.`,
      plan: context.person!.account.plan,
    });
    const body =
      list.sites.length === 0 && cursor === undefined
        ? html`<h1>Your sites</h1>
${drop}
<div class="empty">
  <p>You have no sites yet. Drop a folder above, or publish with one command, using an API token from <a href="/tokens">API tokens</a>:</p>
  <pre class="code" tabindex="0" aria-label="Deploy command"><code id="deploy-command">tar czf - -C ./my-site . | curl --data-binary @- -H "Authorization: Bearer pl_…" ${api}/v1/deploy</code></pre>
  <p data-js-only hidden><button type="button" class="button-secondary" data-copy="deploy-command">Copy command</button></p>
  <p>Sites published without a token appear here once you claim them with their claim link.</p>
</div>`
        : html`<h1>Your sites</h1>
<div class="table-wrap" role="region" tabindex="0" aria-label="Sites you own or are a member of">
<table class="stack-table">
  <caption class="visually-hidden">Sites you own or are a member of</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Address</th><th scope="col">Your role</th><th scope="col">Plan</th><th scope="col">Live revision</th><th scope="col">Last deploy</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>
${list.next_cursor ? html`<p><a href="/?cursor=${list.next_cursor}">More sites</a></p>` : ''}
${drop}`;
    return page(context, { title: 'Your sites', current: 'sites', body, scripts: ['drop.js'] });
  }

  function tokensPage(context: PageContext, errors: FieldError[] = [], name = '', status = 200): AppResponse {
    const fresh = context.flash?.token;
    const tokens = ops.tokens.list(context.caller);
    const apps = ops.oauth.connections(context.caller);
    const events = ops.events.forAccount(context.caller, { limit: 20, cursor: context.request.query.get('events') ?? undefined });
    const appRows = apps.map(
      (app: ConnectionView) => html`<tr>
  <th scope="row">${app.client_name}</th>
  <td data-label="Returns to">${app.redirect_host}</td>
  <td data-label="Connected">${timeOf(app.connected_at)}</td>
  <td data-label="Access renewed">${app.renewed_at ? timeOf(app.renewed_at) : 'Not yet'}</td>
  <td><form method="post" action="/tokens/apps/${app.id}/disconnect">${csrfField(context.formToken)}<button type="submit" class="button-danger" aria-label="Disconnect ${app.client_name}">Disconnect</button></form></td>
</tr>`,
    );
    const rows = tokens.map(
      (token: TokenView) => html`<tr>
  <th scope="row">${token.name}</th>
  <td data-label="Created">${timeOf(token.created_at)}</td>
  <td data-label="Last used">${token.last_used_at ? timeOf(token.last_used_at) : 'Never'}</td>
  <td><a class="button-secondary" href="/tokens/${token.id}/revoke">Revoke<span class="visually-hidden"> ${token.name}…</span><span aria-hidden="true">…</span></a></td>
</tr>`,
    );
    const body = html`${errorSummary(errors)}
<h1>API tokens</h1>
<p>An API token (<code>pl_…</code>) lets a program or an AI agent act for your account over the REST API and the MCP server. Keep it secret; revoke it when it is no longer needed.</p>
${
  fresh
    ? html`<div class="panel panel-success" role="status">
  <h2>Your new token</h2>
  <p>Copy it now: it is shown only once, and only its hash is kept.</p>
  <p><code class="token" id="new-token">${fresh}</code></p>
  <p data-js-only hidden><button type="button" class="button-secondary" data-copy="new-token">Copy token</button></p>
</div>`
    : ''
}
<h2>Create a token</h2>
<form method="post" action="/tokens" novalidate>
  ${csrfField(context.formToken)}
  <div class="field">
    <label for="name">Token name</label>
    <p class="hint" id="name-hint">Something to recognise it by, such as “laptop” or “CI”.</p>
    ${fieldError(errors, 'name')}
    <input id="name" name="name" maxlength="80" required value="${name}" aria-describedby="name-hint" ${invalidAttrs(errors, 'name')}>
  </div>
  <button type="submit">Create token</button>
</form>
<h2>Your tokens</h2>
${
  tokens.length === 0
    ? html`<p>You have no API tokens.</p>`
    : html`<div class="table-wrap" role="region" tabindex="0" aria-label="Your API tokens">
<table class="stack-table">
  <caption class="visually-hidden">Your API tokens</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<h2>Connected MCP apps</h2>
<p>Apps you allowed to use your account through the MCP server (with OAuth, no token to copy). Their access renews itself every hour until you disconnect them.</p>
${
  apps.length === 0
    ? html`<p>No apps are connected.</p>`
    : html`<div class="table-wrap" role="region" tabindex="0" aria-label="Connected MCP apps">
<table class="stack-table">
  <caption class="visually-hidden">Connected MCP apps</caption>
  <thead><tr><th scope="col">App</th><th scope="col">Returns to</th><th scope="col">Connected</th><th scope="col">Access renewed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${appRows}</tbody>
</table></div>`
}
<h2>Account activity</h2>
<p>Sign-ins, tokens and devices of your account, and the changes you made to sites, newest first.</p>
${eventTable('Activity of your account, newest first', events.events, events.next_cursor ? `/tokens?events=${events.next_cursor}` : undefined, true)}`;
    return page(context, { title: 'API tokens', current: 'tokens', body }, status);
  }

  function billingPage(context: PageContext): AppResponse {
    const usage = ops.account.usage(context.caller);
    const plan = usage.plan;
    const paid = plan.id !== 'free';
    const meter = (label: string, used: number, limit: number, format: (n: number) => string): Html =>
      html`<tr><th scope="row">${label}</th><td data-label="Used">${format(used)} of ${format(limit)}</td><td><meter min="0" max="${limit}" value="${Math.min(used, limit)}" aria-label="${label}: ${format(used)} of ${format(limit)}"></meter></td></tr>`;
    const count = (n: number): string => n.toLocaleString('en-GB');
    const siteRows = usage.owned.map(
      (site) =>
        html`<tr><th scope="row"><a href="/sites/${site.name}">${site.name}</a></th><td data-label="Files">${count(site.files)} of ${count(plan.files_per_site)}</td><td data-label="Size">${formatBytes(site.bytes)} of ${formatBytes(plan.bytes_per_site)}</td></tr>`,
    );
    const planRows = usage.plans.map(
      (row: PlanRow) => html`<tr ${row.id === plan.id ? html`aria-current="true" class="current"` : ''}>
  <th scope="row">${row.title}${row.id === plan.id ? html` <span class="tag">Your plan</span>` : ''}</th>
  <td data-label="Sites">${count(row.sites)}</td><td data-label="Files per site">${count(row.files_per_site)}</td><td data-label="Per file">${formatBytes(row.bytes_per_file)}</td>
  <td data-label="Per site">${formatBytes(row.bytes_per_site)}${row.id === 'free' ? '' : ' (all its storage)'}</td><td data-label="History">${row.history_days} days</td>
</tr>`,
    );
    const body = html`<h1>Plan and usage</h1>
<p>Your plan is <strong>${plan.title}</strong>.</p>
<div class="panel">
  <h2>Changing plan</h2>
  <p>Plans are changed by the operator of this Plinth server (<code>plinth admin account set-plan</code>). No payment is taken on this page, and nothing here charges you.</p>
</div>
<h2>Usage</h2>
<div class="table-wrap" role="region" tabindex="0" aria-label="Usage against your plan's limits">
<table class="stack-table">
  <caption class="visually-hidden">Usage against your plan's limits</caption>
  <tbody>
    ${meter('Sites', usage.sites.used, usage.sites.limit, count)}
    ${paid ? meter('Storage (live revisions)', usage.storage_bytes, plan.bytes_per_site, formatBytes) : ''}
  </tbody>
</table></div>
${
  usage.owned.length > 0
    ? html`<h3>Per site</h3>
<div class="table-wrap" role="region" tabindex="0" aria-label="Files and size of each site you own">
<table class="stack-table">
  <caption class="visually-hidden">Files and size of each site you own</caption>
  <thead><tr><th scope="col">Site</th><th scope="col">Files</th><th scope="col">Size</th></tr></thead>
  <tbody>${siteRows}</tbody>
</table></div>
<p class="hint">Each file may be up to ${formatBytes(plan.bytes_per_file)}. Revision history reaches back ${plan.history_days} days.</p>`
    : ''
}
<h2>Plans</h2>
<div class="table-wrap" role="region" tabindex="0" aria-label="Limits of every plan">
<table class="stack-table">
  <caption class="visually-hidden">Limits of every plan</caption>
  <thead><tr><th scope="col">Plan</th><th scope="col">Sites</th><th scope="col">Files per site</th><th scope="col">Per file</th><th scope="col">Per site</th><th scope="col">History</th></tr></thead>
  <tbody>${planRows}</tbody>
</table></div>
<p class="hint">Sites published without an account hold ${count(PLAN_LIMITS.anonymous.maxFiles)} files and ${formatBytes(PLAN_LIMITS.anonymous.maxSiteBytes)}, and expire after ${ANONYMOUS_LIFETIME_MS / 3600_000} hours unless claimed.</p>`;
    return page(context, { title: 'Plan and usage', current: 'billing', body });
  }

  return [
    { method: 'GET', path: '/', handle: async (context) => (context.person ? sitesPage(context) : redirect('/login')) },
    { method: 'GET', path: '/tokens', handle: async (context) => (context.person ? tokensPage(context) : toSignIn(context)) },
    {
      method: 'POST',
      path: '/tokens',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = formOf(context.request).get('name') ?? '';
        try {
          const created = await ops.tokens.create(context.caller, name);
          return redirectWithFlash(context, '/tokens', { token: created.token });
        } catch (err) {
          if ((err as { code?: string }).code !== 'bad_request') throw err;
          return tokensPage(context, [{ field: 'name', message: (err as Error).message }], name, 400);
        }
      },
    },
    {
      // One click never revokes: the button leads here, and this page asks first.
      method: 'GET',
      path: '/tokens/{id}/revoke',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const id = context.request.params[0]!;
        const token = ops.tokens.list(context.caller).find((candidate) => candidate.id === id);
        if (!token) {
          return messagePage(context, 404, 'No such token', 'You have no API token with this id; it may have been revoked already.', {
            href: '/tokens',
            label: 'Back to API tokens',
          });
        }
        return page(context, {
          title: `Revoke ${token.name}`,
          current: 'tokens',
          body: html`<h1>Revoke the token “${token.name}”?</h1>
<p>Programs and agents that use it are refused from the moment you revoke it, and it cannot be brought back: they would need a new token. It was created ${timeOf(token.created_at)} and last used ${token.last_used_at ? timeOf(token.last_used_at) : 'never'}.</p>
<form method="post" action="/tokens/${token.id}/revoke" class="button-row">
  ${csrfField(context.formToken)}
  <button type="submit" class="button-danger">Revoke ${token.name}</button>
  <a href="/tokens" class="button-secondary">Cancel</a>
</form>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/tokens/{id}/revoke',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        await ops.tokens.revoke(context.caller, context.request.params[0]!);
        return redirectWithFlash(context, '/tokens', { notice: 'The token was revoked. Requests with it are refused from now on.' });
      },
    },
    {
      method: 'POST',
      path: '/tokens/apps/{id}/disconnect',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        await ops.oauth.disconnect(context.caller, context.request.params[0]!);
        return redirectWithFlash(context, '/tokens', { notice: 'The app was disconnected. Its access stopped at once; it must ask again to reconnect.' });
      },
    },
    { method: 'GET', path: '/billing', handle: async (context) => (context.person ? billingPage(context) : toSignIn(context)) },
  ];
}

export function planTitle(plan: string): string {
  return plan === 'anonymous' ? 'No account' : plan.charAt(0).toUpperCase() + plan.slice(1);
}
