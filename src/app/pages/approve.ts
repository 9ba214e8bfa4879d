import { html } from 'hono/html';
import type { Config } from '../../config.js';
import type { SiteView } from '../../contract/index.js';
import { messagePage, page, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, invalidAttrs, roleWithArticle, timeOf, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import { redirect, type AppResponse } from '../response.js';

/**
 * `/approve/ap_…` (SPEC 4.3): a deletion asked for over the API (or from the site page) happens
 * only when a signed-in owner types the site's address here and confirms.
 */
export function approvalRoutes(deps: AppDeps): PageRoute[] {
  const { ops, config } = deps;

  async function approvalPage(context: PageContext, token: string, errors: FieldError[] = [], typed = '', status = 200): Promise<AppResponse> {
    let found;
    try {
      found = ops.sites.findApproval(token);
    } catch {
      return messagePage(
        context,
        404,
        'This approval link does not work',
        html`<p>There is no deletion waiting for approval at this address. Nothing was deleted.</p>`,
        { href: '/', label: 'Go to your sites' },
      );
    }
    const { approval, site, status: state } = found;
    const name = site?.name ?? 'the site';
    if (state === 'approved') {
      return messagePage(
        context,
        200,
        `${name} was deleted`,
        html`<p>The deletion was approved ${approval.decidedAt ? html`on ${timeOf(new Date(approval.decidedAt).toISOString())}` : ''}. The address now answers “gone”, and the name is never given out again.</p>`,
        { href: '/', label: 'Go to your sites' },
      );
    }
    if (state === 'expired') {
      return messagePage(
        context,
        410,
        'This deletion request has expired',
        html`<p>Nothing was deleted: ${name} stays online. Ask for the deletion again if it is still wanted.</p>`,
        { href: '/', label: 'Go to your sites' },
      );
    }
    const seen = site ? await siteAsSeen(context, site.name) : undefined;
    const role = seen?.role;
    if (!seen?.permissions.includes('delete')) {
      return messagePage(
        context,
        403,
        'Only an owner can approve this',
        html`<p>Deleting ${name} needs the approval of one of its owners. You are signed in as ${context.person!.account.email}${role ? html`, ${roleWithArticle(role)} of the site` : ''}. Nothing was deleted.</p>`,
        { href: '/', label: 'Go to your sites' },
      );
    }
    const address = siteAddress(config, site!.name);
    return page(
      context,
      {
        title: `Delete ${name}`,
        body: html`${errorSummary(errors)}
<h1>Delete ${name}?</h1>
<p>This deletes <a href="${address.url}" rel="noopener">${address.url}</a> permanently: visitors and the API get “gone”, and the name is never given out again.
The request expires ${timeOf(new Date(approval.expiresAt).toISOString())}.</p>
<form method="post" action="/approve/${token}" novalidate>
  ${csrfField(context.formToken)}
  <div class="field">
    <label for="address">Type the site's address to confirm: <strong>${address.host}</strong></label>
    <p class="hint" id="address-hint">The name alone (<code>${site!.name}</code>) or the whole address is accepted, in any case.</p>
    ${fieldError(errors, 'address')}
    <input id="address" name="address" autocomplete="off" spellcheck="false" required value="${typed}" aria-describedby="address-hint" ${invalidAttrs(errors, 'address')}>
  </div>
  <div class="button-row">
    <button type="submit" class="button-danger">Delete ${name} permanently</button>
    <a class="button-secondary" href="/sites/${site!.name}">Cancel</a>
  </div>
</form>`,
      },
      status,
    );
  }

  /** The site as the signed-in person sees it, or undefined when they cannot see it at all. */
  async function siteAsSeen(context: PageContext, name: string): Promise<SiteView | undefined> {
    try {
      const site = await ops.sites.get(context.caller, name);
      return 'role' in site ? site : undefined;
    } catch {
      return undefined;
    }
  }

  return [
    {
      method: 'GET',
      path: '/approve/{token}',
      handle: async (context) => (context.person ? approvalPage(context, context.request.params[0]!) : toSignIn(context)),
    },
    {
      method: 'POST',
      path: '/approve/{token}',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const token = context.request.params[0]!;
        const typed = (formOf(context.request).get('address') ?? '').trim();
        try {
          await ops.sites.approveDeletion(context.caller, token, typed);
          return redirect(`/approve/${token}`);
        } catch (err) {
          const error = err as { code?: string; message: string; details?: Record<string, unknown> };
          if (error.details?.reason === 'wrong_address') return approvalPage(context, token, [{ field: 'address', message: error.message }], typed, 400);
          if (error.code === 'forbidden' || error.code === 'gone' || error.code === 'not_found' || error.code === 'bad_request')
            return approvalPage(context, token);
          throw err;
        }
      },
    },
  ];
}

/** The site's address as a person would type it: the host, and the full URL. */
function siteAddress(config: Readonly<Config>, name: string): { host: string; url: string } {
  const url = config.publicUrls.site.replace('{name}', name);
  return { host: new URL(url).host, url };
}
