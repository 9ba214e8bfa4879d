import { html } from 'hono/html';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, timeOf } from '../layout.js';
import { redirect, type AppResponse } from '../response.js';

/**
 * `/invites/inv_…`: the invited address, signed in (the e-mailed sign-in link proves it), accepts
 * or declines. Signed in as someone else, the page says so and offers to sign out.
 */
export function inviteRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;

  const gone = (context: PageContext, message: string): AppResponse =>
    messagePage(context, 404, 'This invitation does not work', html`<p>${message}</p>`, { href: '/', label: 'Go to your sites' });

  return [
    {
      method: 'GET',
      path: '/invites/{token}',
      async handle(context) {
        const token = context.request.params[0]!;
        let invite;
        try {
          invite = ops.members.previewInvite(token);
        } catch (err) {
          return gone(context, (err as Error).message);
        }
        if (!context.person) {
          // Signed out, the page names the site and the invited address before asking for a sign-in.
          const next = encodeURIComponent(context.request.path);
          return page(context, {
            title: `Join ${invite.site.name}`,
            body: html`<h1>Join ${invite.site.name}?</h1>
<p>${invite.invited_by ?? 'An owner'} invited <strong>${invite.email}</strong> to <a href="${invite.site.url}" rel="noopener">${invite.site.url}</a> as <strong>${invite.role}</strong>. The invitation is valid until ${timeOf(invite.expires_at)}.</p>
<p>Sign in as ${invite.email} to accept or decline it. If that address has no account yet, signing in creates a free one.</p>
<p><a class="button" href="/login?next=${next}&amp;email=${encodeURIComponent(invite.email)}">Sign in as ${invite.email}</a></p>`,
          });
        }
        const me = context.person.account.email;
        if (invite.email !== me) {
          return page(
            context,
            {
              title: 'This invitation is for someone else',
              body: html`<h1>This invitation is for someone else</h1>
<p>The invitation to ${invite.site.name} was sent to <strong>${invite.email}</strong>, and you are signed in as <strong>${me}</strong>. Nothing was changed.</p>
<p>To accept it, sign out and sign in as ${invite.email}.</p>
<form method="post" action="/logout">${csrfField(context.formToken)}<button type="submit">Sign out</button></form>`,
            },
            403,
          );
        }
        return page(context, {
          title: `Join ${invite.site.name}`,
          body: html`<h1>Join ${invite.site.name}?</h1>
<p>${invite.invited_by ?? 'An owner'} invited you (${invite.email}) to <a href="${invite.site.url}" rel="noopener">${invite.site.url}</a> as <strong>${invite.role}</strong>.
${invite.role === 'editor' ? 'Editors may publish and roll back the site.' : 'Viewers may see the site and its history.'} The invitation is valid until ${timeOf(invite.expires_at)}.</p>
<div class="button-row">
  <form method="post" action="/invites/${token}/accept">${csrfField(context.formToken)}<button type="submit">Accept the invitation</button></form>
  <form method="post" action="/invites/${token}/decline">${csrfField(context.formToken)}<button type="submit" class="button-secondary">Decline</button></form>
</div>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/invites/{token}/accept',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        try {
          const joined = await ops.members.acceptInvite(context.caller, context.request.params[0]!);
          return redirectWithFlash(context, `/sites/${encodeURIComponent(joined.site.name)}`, { notice: `You joined this site as ${joined.role}.` });
        } catch (err) {
          if ((err as { code?: string }).code === 'forbidden') return redirect(`/invites/${context.request.params[0]!}`);
          return gone(context, (err as Error).message);
        }
      },
    },
    {
      method: 'POST',
      path: '/invites/{token}/decline',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        try {
          const declined = await ops.members.declineInvite(context.caller, context.request.params[0]!);
          return redirectWithFlash(context, '/', { notice: `You declined the invitation to ${declined.site.name}.` });
        } catch (err) {
          if ((err as { code?: string }).code === 'forbidden') return redirect(`/invites/${context.request.params[0]!}`);
          return gone(context, (err as Error).message);
        }
      },
    },
  ];
}
