import { html } from 'hono/html';
import { formatBytes } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, fileCount, timeOf } from '../layout.js';
import { formOf } from '../request.js';
import type { AppResponse } from '../response.js';

/**
 * `/claim/ct_…` (SPEC 3): a signed-in person moves an anonymous site into their account. Signed
 * out, they sign in first and come back here.
 */
export function claimRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;

  function refusal(context: PageContext, err: unknown): AppResponse {
    const error = err as { code?: string; message: string; details?: Record<string, unknown> };
    if (error.code === 'not_found')
      return messagePage(
        context,
        404,
        'This claim link does not work',
        html`<p>${error.message}</p><p>If you claimed the site already, it is in your list of sites.</p>`,
        { href: '/', label: 'Go to your sites' },
      );
    if (error.code === 'gone')
      return messagePage(context, 410, 'This site has expired', html`<p>${error.message}</p>`, { href: '/', label: 'Go to your sites' });
    if (error.code === 'limit') {
      return messagePage(
        context,
        429,
        'Your plan has no room for another site',
        html`<p>${error.message} Nothing was changed: the site stays unclaimed until it expires.</p><p>Delete one of your sites, or ask the operator for a larger plan, then open the claim link again.</p>`,
        { href: '/billing', label: 'See your plan and usage' },
      );
    }
    throw err;
  }

  return [
    {
      method: 'GET',
      path: '/claim/{token}',
      async handle(context) {
        const token = context.request.params[0]!;
        let preview;
        try {
          preview = ops.claims.preview(token);
        } catch (err) {
          return refusal(context, err);
        }
        const { site } = preview;
        const facts = html`<dl class="facts">
  <dt>Address</dt><dd><a href="${site.url}" rel="noopener">${site.url}</a></dd>
  <dt>Content</dt><dd>${fileCount(site.files)}, ${formatBytes(site.bytes)}</dd>
  <dt>Expires unless claimed</dt><dd>${timeOf(site.expires_at)}</dd>
</dl>`;
        if (!context.person) {
          // Signed out, the page still says which site this is before asking for a sign-in.
          return page(context, {
            title: `Claim ${site.name}`,
            body: html`<h1>Claim ${site.name}</h1>
<p>This site was published without an account. Sign in to claim it: it moves into your account, you become its owner, and it no longer expires. Signing in with a new address creates a free account.</p>
${facts}
<p><a class="button" href="/login?next=${encodeURIComponent(context.request.path)}">Sign in to claim ${site.name}</a></p>`,
          });
        }
        const usage = ops.account.usage(context.caller);
        if (usage.sites.used >= usage.sites.limit) {
          // Said before any button: claiming would be refused (429) and change nothing.
          return page(context, {
            title: `Claim ${site.name}`,
            body: html`<h1>Claim ${site.name}</h1>
${facts}
<div class="panel" role="status">
  <h2>Your plan has no room for another site</h2>
  <p>Your ${usage.plan.title} plan allows ${usage.sites.limit} ${usage.sites.limit === 1 ? 'site' : 'sites'}, and your account (${context.person.account.email}) has ${usage.sites.used}. Delete one of your sites, or ask the operator for a larger plan, then open this claim link again before the site expires.</p>
  <p class="button-row"><a class="button-secondary" href="/">Your sites</a><a class="button-secondary" href="/billing">Plan and usage</a></p>
</div>`,
          });
        }
        return page(context, {
          title: `Claim ${site.name}`,
          body: html`<h1>Claim ${site.name}</h1>
<p>This site was published without an account. Claim it to keep it: it moves into your account (${context.person.account.email}), you become its owner, and it no longer expires.</p>
${facts}
<form method="post" action="/claim/${token}">
  ${csrfField(context.formToken)}
  ${
    preview.can_give_agent_token
      ? html`<div class="field checkbox">
    <input type="checkbox" id="agent-token" name="agent_token" value="yes" aria-describedby="agent-token-hint">
    <label for="agent-token">Let the agent that published this keep updating it</label>
    <p class="hint" id="agent-token-hint">Creates an API token for your account that the publishing agent receives once, the next time it checks this site. You can revoke it any time under API tokens.</p>
  </div>`
      : ''
  }
  <button type="submit">Claim this site</button>
</form>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/claim/{token}',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        try {
          const result = await ops.claims.claim(context.caller, context.request.params[0]!, {
            giveAgentToken: formOf(context.request).get('agent_token') === 'yes',
          });
          return redirectWithFlash(context, `/sites/${encodeURIComponent(result.site.name)}`, { notice: 'The site is yours now: it no longer expires.' });
        } catch (err) {
          return refusal(context, err);
        }
      },
    },
  ];
}
