import { html } from 'hono/html';
import { DEVICE_CODE_LIFETIME_MS, OAUTH_PATHS, type DeviceRequestView } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, invalidAttrs, timeOf, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import type { AppResponse } from '../response.js';

/**
 * `/device` (RFC 8628 §3.3): a person signed in to the app types the code a device shows (or
 * follows the address with the code in it), sees which device asks and what it will be able to
 * do, and approves or denies. Approving gives the device an API token of the account, named
 * after it, the next time it asks the token endpoint.
 */
export function deviceRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;
  const minutes = DEVICE_CODE_LIFETIME_MS / 60_000;

  function codeForm(context: PageContext, errors: FieldError[] = [], typed = '', status = 200): AppResponse {
    return page(
      context,
      {
        title: 'Sign in a device',
        body: html`${errorSummary(errors)}
<h1>Sign in a device</h1>
<p>A program that signs in to Plinth, such as <code>plinth login</code>, shows an 8-letter code. Type it here to see what asks for access to your account, <strong>${context.person!.account.email}</strong>, and approve or deny it.</p>
<form method="get" action="${OAUTH_PATHS.device}" novalidate>
  <div class="field">
    <label for="user_code">Code shown by the device</label>
    <p class="hint" id="user_code-hint">8 letters, such as BCDF-GHJK. The code works for ${minutes} minutes.</p>
    ${fieldError(errors, 'user_code')}
    <input id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required value="${typed}" aria-describedby="user_code-hint" ${invalidAttrs(errors, 'user_code')}>
  </div>
  <button type="submit">Continue</button>
</form>`,
      },
      status,
    );
  }

  function requestPage(context: PageContext, request: DeviceRequestView): AppResponse {
    const clientTag =
      request.client_kind === 'plinth'
        ? html`<span class="tag">Plinth's own tool</span>`
        : request.client_kind === 'metadata_document'
          ? html`<span class="tag">described by ${new URL(request.client_id).host}</span>`
          : html`<span class="tag">name given by the app</span>`;
    return page(context, {
      title: `Approve ${request.device_name}?`,
      body: html`<h1>Approve “${request.device_name}”?</h1>
<p>A device asks for an API token of your account, <strong>${context.person!.account.email}</strong>. Check that the code matches the one on its screen.</p>
<dl class="facts">
  <dt>Code</dt>
  <dd><code>${request.user_code}</code></dd>
  <dt>Device</dt>
  <dd>${request.device_name}</dd>
  <dt>Program</dt>
  <dd>${request.client_name} ${clientTag}</dd>
  <dt>Asked from</dt>
  <dd>the network ${request.network}${request.same_network ? ' (the network you are on now)' : html` <strong>(not the network you are on now)</strong>`}</dd>
  <dt>Asked at</dt>
  <dd>${timeOf(request.requested_at)}</dd>
</dl>
<h2>If you approve it, the device can</h2>
<ul>
  <li>publish new sites in your account, and update, roll back and rename your sites</li>
  <li>read your sites, their files, history and members</li>
  <li>invite and remove people, and ask for a site to be deleted (a deletion still needs you to confirm it here)</li>
</ul>
<p>It gets an API token of your account named “${request.device_name}”, for the REST API and the MCP server, until you revoke it under <a href="/tokens">API tokens</a>.</p>
<div class="panel">
  <p><strong>Approve only a sign-in you started yourself, just now.</strong> If someone sent you this code or address, deny it: they are asking for your account.</p>
</div>
<form method="post" action="${OAUTH_PATHS.device}" class="button-row">
  ${csrfField(context.formToken)}
  <input type="hidden" name="user_code" value="${request.user_code}">
  <button type="submit" name="decision" value="approve">Approve ${request.device_name}</button>
  <button type="submit" name="decision" value="deny" class="button-secondary">Deny</button>
</form>`,
    });
  }

  /** A refusal of the operations as the page shows it: next to the code field, or a whole page for a cap. */
  function refusal(context: PageContext, err: unknown, typed: string): AppResponse {
    const { code, message } = err as { code?: string; message: string };
    if (code === 'bad_request' || code === 'not_found') return codeForm(context, [{ field: 'user_code', message }], typed, code === 'not_found' ? 404 : 400);
    if (code === 'limit') {
      const response = messagePage(context, 429, 'Too many codes tried', html`<p>${message}</p><p>Nothing was approved.</p>`, {
        href: '/',
        label: 'Go to your sites',
      });
      response.headers = { ...response.headers, ...(err as { headers?: Record<string, string> }).headers };
      return response;
    }
    throw err;
  }

  return [
    {
      method: 'GET',
      path: OAUTH_PATHS.device,
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const typed = context.request.query.get('user_code');
        if (typed === null) return codeForm(context);
        try {
          return requestPage(context, await ops.device.find(context.caller, typed, context.network));
        } catch (err) {
          return refusal(context, err, typed);
        }
      },
    },
    {
      method: 'POST',
      path: OAUTH_PATHS.device,
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const form = formOf(context.request);
        const typed = form.get('user_code') ?? '';
        const decision = form.get('decision') === 'approve' ? 'approve' : 'deny';
        let decided: DeviceRequestView;
        try {
          decided = await ops.device.decide(context.caller, typed, decision, context.network);
        } catch (err) {
          return refusal(context, err, typed);
        }
        return redirectWithFlash(context, OAUTH_PATHS.device, {
          notice:
            decision === 'approve'
              ? `Approved: “${decided.device_name}” gets its API token the next time it asks, within seconds, and you can close this page. Revoke the token under API tokens to sign the device out.`
              : `Denied: “${decided.device_name}” gets no access to your account.`,
        });
      },
    },
  ];
}
