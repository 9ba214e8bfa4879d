import { html } from 'hono/html';
import { OAUTH_PATHS, type AuthorizationRequest } from '../../sites/index.js';
import { messagePage, page, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField } from '../layout.js';
import { formOf } from '../request.js';
import { redirect, type AppResponse } from '../response.js';
import { pageHeaders } from '../security.js';

/** The parameters of an authorization request that the consent form carries back unchanged. */
const CARRIED = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'resource', 'scope'] as const;

/**
 * The OAuth authorization endpoint: an MCP app sends the person here; signed in, they see which
 * app asks, where it will send them back and what it may do, and allow or deny. Allowing sends
 * the browser back to the app with a single-use code (and `state`, and `iss`).
 */
export function oauthConsentRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;

  /** The checked request, or the answer for a request that cannot go on. */
  async function check(context: PageContext, params: URLSearchParams): Promise<AuthorizationRequest | AppResponse> {
    try {
      return await ops.oauth.checkAuthorization(params, context.network);
    } catch (err) {
      const error = err as { code?: string; message: string; details?: { oauth_error?: string; redirect?: boolean; redirect_uri?: string; state?: string } };
      if (error.details?.redirect && error.details.redirect_uri) {
        // The app is known and the address is its own: tell the app, not the person.
        return redirect(
          ops.oauth.errorRedirect(
            { redirectUri: error.details.redirect_uri, state: error.details.state },
            error.details.oauth_error ?? 'invalid_request',
            error.message,
          ),
          303,
        );
      }
      if (error.details?.oauth_error) {
        return messagePage(
          context,
          400,
          'This app cannot connect',
          html`<p>${error.message}</p><p>Nothing was shared with it. If you trust the app, ask its makers to fix how it connects to Plinth.</p>`,
          { href: '/', label: 'Go to your sites' },
        );
      }
      throw err;
    }
  }

  function consentPage(context: PageContext, request: AuthorizationRequest, params: URLSearchParams): AppResponse {
    const { client } = request;
    const response = page(context, {
      title: `Connect ${client.name}`,
      body: html`<h1>Connect ${client.name} to Plinth?</h1>
<p>An app asks to act for your account, <strong>${context.person!.account.email}</strong>, through the Plinth MCP server.</p>
<dl class="facts">
  <dt>App</dt>
  <dd>${client.name} ${
    client.kind === 'metadata_document'
      ? html`<span class="tag">described by ${new URL(client.id).host}</span>`
      : html`<span class="tag">name given by the app</span>`
  }</dd>
  <dt>Sends you back to</dt>
  <dd>${request.redirectHost}</dd>
  <dt>Connects to</dt>
  <dd>${request.resource}</dd>
</dl>
<h2>If you allow it, the app can</h2>
<ul>
  <li>publish new sites, and update, roll back and rename your sites</li>
  <li>read your sites, their files, history and members</li>
  <li>invite and remove people, and ask for a site to be deleted (a deletion still needs you to confirm it here)</li>
</ul>
<p>It can do this only through the MCP server, not the REST API. Its access renews itself until you disconnect it under <a href="/tokens">API tokens</a>.
Allow only apps you trust.</p>
<form method="post" action="${OAUTH_PATHS.authorize}" class="actions">
  ${csrfField(context.formToken)}
  ${CARRIED.map((name) => (params.has(name) ? html`<input type="hidden" name="${name}" value="${params.get(name)}">` : ''))}
  <button type="submit" name="decision" value="allow">Allow ${client.name}</button>
  <button type="submit" name="decision" value="deny" class="button-secondary">Deny</button>
</form>`,
    });
    // The answer to this form redirects to the app, which form-action must allow; only its origin.
    response.headers = { ...pageHeaders({ formActions: [new URL(request.redirectUri).origin] }), ...response.headers };
    return response;
  }

  return [
    {
      method: 'GET',
      path: OAUTH_PATHS.authorize,
      async handle(context) {
        const checked = await check(context, context.request.query);
        if ('status' in checked) return checked;
        if (!context.person) return toSignIn(context);
        return consentPage(context, checked, context.request.query);
      },
    },
    {
      method: 'POST',
      path: OAUTH_PATHS.authorize,
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const form = formOf(context.request);
        const params = new URLSearchParams();
        for (const name of CARRIED) for (const value of form.getAll(name)) params.append(name, value);
        const checked = await check(context, params);
        if ('status' in checked) return checked;
        if (form.get('decision') !== 'allow') {
          return redirect(ops.oauth.errorRedirect(checked, 'access_denied', 'The person denied access.'));
        }
        return redirect(await ops.oauth.approve(context.caller, checked));
      },
    },
  ];
}
