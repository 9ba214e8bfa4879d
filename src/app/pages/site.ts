import { html } from 'hono/html';
import type { SiteAction } from '../../rules/index.js';
import type { RevisionView, SiteView } from '../../contract/index.js';
import { formatBytes } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, fileCount, invalidAttrs, roleWithArticle, timeOf, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import { jsonResponse, redirect, type AppResponse } from '../response.js';
import { planTitle } from './account.js';
import { ARCHIVE_FIELD, dropZone, receiveUpload } from './publish.js';
import { domainsSection, siteDomainRoutes, type DomainFormState } from './site-domains.js';
import { eventTable, webhookTables } from './event-log.js';
import { accessSection, revisionActions, siteAccessRoutes } from './site-access.js';
import { analyticsSection } from './site-analytics.js';

/** Form values and errors to show again after a refused rename or invite. */
interface SiteFormState {
  errors: FieldError[];
  rename?: string;
  inviteEmail?: string;
  inviteRole?: string;
  domain?: DomainFormState;
}

const siteHref = (name: string): string => `/sites/${encodeURIComponent(name)}`;

/** `/sites/<name>`: details, history with rollback, rename, delete, members and invites. */
export function siteRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;

  async function sitePage(context: PageContext, name: string, state: SiteFormState = { errors: [] }, status = 200): Promise<AppResponse> {
    const site = await ops.sites.get(context.caller, name);
    // Only a claimed site's token gets the claim poll instead of the site; a person never does.
    if (!('name' in site)) throw new Error('claim poll for a signed-in person');
    return renderSite(context, site, state, status);
  }

  async function renderSite(context: PageContext, site: SiteView, state: SiteFormState, status: number): Promise<AppResponse> {
    const may = (action: SiteAction): boolean => site.permissions.includes(action);
    const revisions = await ops.revisions.list(context.caller, site.name, { limit: 50, cursor: context.request.query.get('revisions') ?? undefined });
    const live = revisions.revisions.find((revision) => revision.id === site.live_revision?.id);
    const members = ops.members.list(context.caller, site.name);
    const checked = ops.revisions.liveWarnings(context.caller, site.name);
    const events = ops.events.forSite(context.caller, site.name, { limit: 20, cursor: context.request.query.get('events') ?? undefined });
    // Webhooks are the owners': their URLs may carry a receiver's secret.
    const hooks =
      site.role === 'owner'
        ? await Promise.all(
            ops.webhooks.list(context.caller, site.name).webhooks.map(async (webhook) => ({
              webhook,
              deliveries: (await ops.webhooks.deliveries(context.caller, site.name, webhook.id)).deliveries.slice(0, 10),
            })),
          )
        : undefined;
    // The page still shows the site when its counts cannot be read (PostgreSQL away, say).
    const stats = await ops.analytics.read(context.caller, site.name).catch(() => undefined);
    const warningRows = checked.warnings.map(
      (warning) =>
        html`<tr><th scope="row">${warning.file}</th><td data-label="Line">${warning.line}</td><td data-label="Reference"><code>${warning.ref}</code></td></tr>`,
    );
    const token = context.formToken;
    // The add-domain form's error is summarised at the top with the others.
    const errors = [...state.errors, ...(state.domain?.errors ?? [])];

    const revisionRows = revisions.revisions.map(
      (revision: RevisionView) => html`<tr>
  <th scope="row">#${revision.number}${revision.id === site.live_revision?.id ? html` <span class="tag">Live</span>` : ''}${revision.draft ? html` <span class="tag">Draft</span>` : ''}</th>
  <td data-label="Published">${timeOf(revision.created_at)}</td>
  <td data-label="By">${revision.created_by}</td>
  <td data-label="Kind">${revision.kind === 'rollback' ? 'rollback' : revision.kind}</td>
  <td data-label="Content">${fileCount(revision.files)}, ${formatBytes(revision.bytes)}</td>
  <td>${revisionActions(context, site, revision)}${
    // A draft was never live: it is promoted (made live as it is), not rolled back to.
    may('rollback') && revision.id !== site.live_revision?.id && !revision.draft
      ? html`<form method="post" action="/sites/${site.name}/rollback">${csrfField(token)}<input type="hidden" name="revision" value="${revision.id}"><button type="submit" class="button-secondary">Roll back to revision ${revision.number}</button></form>`
      : ''
  }${
    // Asks first on a page of its own; the live revision cannot be deleted.
    may('delete_revision') && revision.id !== site.live_revision?.id
      ? html`<form method="get" action="/sites/${site.name}/revisions/${revision.number}/delete"><button type="submit" class="button-danger">Delete revision ${revision.number}…</button></form>`
      : ''
  }</td>
</tr>`,
    );
    const memberRows = members.members.map(
      (member) => html`<tr>
  <th scope="row">${member.email}</th><td data-label="Role">${member.role}</td>
  <td>${
    may('manage_members') && member.email !== context.person?.account.email
      ? html`<form method="post" action="/sites/${site.name}/members/remove">${csrfField(token)}<input type="hidden" name="email" value="${member.email}"><button type="submit" class="button-danger" aria-label="Remove ${member.email}">Remove</button></form>`
      : ''
  }</td>
</tr>`,
    );
    const inviteRows = members.invites.map(
      (invite) => html`<tr>
  <th scope="row">${invite.email}</th><td data-label="Role"><span>${invite.role} (invited, until ${timeOf(invite.expires_at)})</span></td>
  <td>${
    may('manage_members')
      ? html`<form method="post" action="/sites/${site.name}/invites/revoke">${csrfField(token)}<input type="hidden" name="email" value="${invite.email}"><button type="submit" class="button-secondary" aria-label="Withdraw invitation for ${invite.email}">Withdraw invitation</button></form>`
      : ''
  }</td>
</tr>`,
    );

    const body = html`${errorSummary(errors)}
<p class="breadcrumb"><a href="/">Your sites</a></p>
<h1>${site.name}</h1>
<dl class="facts">
  <dt>Address</dt><dd><a href="${site.url}" rel="noopener">${site.url}</a></dd>
  <dt>Your role</dt><dd>${site.role}</dd>
  <dt>Plan</dt><dd>${planTitle(site.plan)}</dd>
  <dt>Live revision</dt><dd>${site.live_revision ? html`#${site.live_revision.number}, ${timeOf(site.live_revision.created_at)}` : 'None yet'}</dd>
  <dt>Files</dt><dd>${live ? html`${fileCount(live.files)}, ${formatBytes(live.bytes)} · <a href="/sites/${site.name}/files">Browse the files</a>` : '—'}</dd>
  <dt>Expires</dt><dd>${site.expires_at ? timeOf(site.expires_at) : 'Never'}</dd>
</dl>

${
  may('deploy') && site.live_revision
    ? dropZone(context, {
        action: `/sites/${site.name}/publish`,
        heading: 'Publish a new version',
        lead: html`Drop the whole site: it replaces revision ${site.live_revision.number} as the next revision. Files not in the upload are removed; you can roll back afterwards.`,
        baseRevision: site.live_revision.id,
        errors: errors.filter((error) => error.field === ARCHIVE_FIELD),
        plan: site.plan,
      })
    : ''
}

${
  checked.warnings_total > 0
    ? html`<h2>Broken links</h2>
<p>${checked.warnings_total === 1 ? 'One reference' : `${checked.warnings_total} references`} in the live revision's pages and style sheets ${checked.warnings_total === 1 ? 'leads' : 'lead'} to no file of the site${checked.warnings_total > checked.warnings.length ? html`; the first ${checked.warnings.length} are listed` : ''}. ${
        may('deploy') ? 'Fix them and publish again.' : 'An editor or owner of the site can fix them.'
      }</p>
<div class="table-wrap" role="region" tabindex="0" aria-label="Broken links in the live revision">
<table class="stack-table">
  <caption class="visually-hidden">Broken links in the live revision</caption>
  <thead><tr><th scope="col">File</th><th scope="col">Line</th><th scope="col">Reference</th></tr></thead>
  <tbody>${warningRows}</tbody>
</table></div>`
    : ''
}

${stats ? analyticsSection(stats) : html`<h2 id="visits">Visits</h2><p>The visit counts cannot be read just now; try again in a minute.</p>`}

<h2>Revisions</h2>
${
  may('rollback') || may('promote')
    ? html`<p class="hint" id="revision-actions-hint">“Roll back” publishes an earlier revision's files again, as a new revision. “Promote” makes a draft (a revision stored without going live) the live one as it is, without a copy.</p>`
    : ''
}
<div class="table-wrap" role="region" tabindex="0" aria-label="Revisions of ${site.name}, newest first">
<table class="stack-table">
  <caption class="visually-hidden">Revisions of ${site.name}, newest first</caption>
  <thead><tr><th scope="col">Revision</th><th scope="col">Published</th><th scope="col">By</th><th scope="col">Kind</th><th scope="col">Content</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${revisionRows}</tbody>
</table></div>
${revisions.next_cursor ? html`<p><a href="/sites/${site.name}?revisions=${revisions.next_cursor}">Older revisions</a></p>` : ''}
${accessSection(context, site, errors)}

<h2>People</h2>
<div class="table-wrap" role="region" tabindex="0" aria-label="Members and pending invitations">
<table class="stack-table">
  <caption class="visually-hidden">Members and pending invitations</caption>
  <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${memberRows}${inviteRows}</tbody>
</table></div>
${
  may('manage_members')
    ? html`<h3>Invite someone</h3>
<form method="post" action="/sites/${site.name}/invites" novalidate class="inline-form">
  ${csrfField(token)}
  <div class="field">
    <label for="invite-email">E-mail address</label>
    ${fieldError(errors, 'invite-email')}
    <input id="invite-email" name="email" type="email" autocomplete="off" spellcheck="false" required value="${state.inviteEmail ?? ''}" ${invalidAttrs(errors, 'invite-email')}>
  </div>
  <div class="field">
    <label for="invite-role">Role</label>
    ${fieldError(errors, 'invite-role')}
    <select id="invite-role" name="role" ${invalidAttrs(errors, 'invite-role')}>
      <option value="editor" ${state.inviteRole === 'viewer' ? '' : html`selected`}>Editor: may publish and roll back</option>
      <option value="viewer" ${state.inviteRole === 'viewer' ? html`selected` : ''}>Viewer: may see the site and its history</option>
    </select>
  </div>
  <button type="submit">Send invitation</button>
</form>`
    : ''
}
${domainsSection(context, deps, site, may('manage_members'), state.domain ?? { errors: [] })}
<h2>Activity</h2>
${eventTable(`Changes to ${site.name}, newest first`, events.events, events.next_cursor ? `/sites/${site.name}?events=${events.next_cursor}` : undefined, false)}
${hooks ? html`<h2>Webhooks</h2>${webhookTables(site.name, hooks)}` : ''}
${
  may('rename')
    ? html`<h2>Rename</h2>
<form method="post" action="/sites/${site.name}/rename" novalidate>
  ${csrfField(token)}
  <div class="field">
    <label for="rename">New name</label>
    <p class="hint" id="rename-hint">4 to 63 characters: a–z, 0–9 and hyphens. The old address will redirect to the new one; names are never reused.</p>
    ${fieldError(errors, 'rename')}
    <input id="rename" name="name" required spellcheck="false" autocomplete="off" value="${state.rename ?? ''}" aria-describedby="rename-hint" ${invalidAttrs(errors, 'rename')}>
  </div>
  <button type="submit">Rename site</button>
</form>`
    : ''
}
${
  may('delete')
    ? html`<h2>Delete</h2>
<p>Deleting is permanent: the address answers “gone” and the name is never given out again. You will be asked to type the address to confirm.</p>
<form method="post" action="/sites/${site.name}/delete">${csrfField(token)}<button type="submit" class="button-danger">Delete this site…</button></form>`
    : ''
}`;
    return page(context, { title: site.name, current: 'sites', body, scripts: may('deploy') ? ['drop.js'] : [] }, status);
  }

  /** Runs a form action; a refusal the person can fix is shown on the site page with the field. */
  async function act(
    context: PageContext,
    run: (name: string, form: URLSearchParams) => Promise<AppResponse>,
    field?: (err: { message: string; details?: Record<string, unknown> }, form: URLSearchParams) => SiteFormState | undefined,
  ): Promise<AppResponse> {
    if (!context.person) return toSignIn(context);
    const name = context.request.params[0]!;
    const form = formOf(context.request);
    try {
      return await run(name, form);
    } catch (err) {
      const error = err as { code?: string; message: string; details?: Record<string, unknown> };
      const state = field && (error.code === 'bad_request' || error.code === 'not_found') ? field(error, form) : undefined;
      if (state) return sitePage(context, name, state, 400);
      if (error.code === 'conflict') {
        return redirectWithFlash(context, siteHref(name), {
          notice: 'Someone published this site at the same moment, so nothing was rolled back. Check the revisions and try again.',
        });
      }
      throw err;
    }
  }

  return [
    ...siteDomainRoutes(deps, (context, name, domain, status) => sitePage(context, name, { errors: [], domain }, status)),
    ...siteAccessRoutes(deps, (context, name, errors, status) => sitePage(context, name, { errors }, status)),
    {
      method: 'GET',
      path: '/sites/{name}',
      handle: async (context) => (context.person ? sitePage(context, context.request.params[0]!) : toSignIn(context)),
    },
    {
      // A drop onto the site's page: a new revision of this site, based on the live one the page showed.
      method: 'POST',
      path: '/sites/{name}/publish',
      upload: true,
      async handle(context) {
        const name = context.request.params[0]!;
        if (!context.person) {
          if (/\bapplication\/json\b/i.test(context.request.headers.accept ?? '')) {
            return jsonResponse({ error: { code: 'unauthorized', message: 'You are signed out. Sign in again, then drop the site again.' } }, 401);
          }
          return redirect(`/login?next=${encodeURIComponent(siteHref(name))}`);
        }
        return receiveUpload(context, { site: name, refused: (errors, status) => sitePage(context, name, { errors }, status) });
      },
    },
    {
      method: 'POST',
      path: '/sites/{name}/rollback',
      handle: (context) =>
        act(context, async (name, form) => {
          const wanted = form.get('revision') ?? '';
          const result = await ops.revisions.rollback(context.caller, name, wanted);
          const target = (await ops.revisions.list(context.caller, name, { limit: 200 })).revisions.find((r) => r.id === wanted);
          const which = target ? `revision ${target.number}` : 'that revision';
          if (result.unchanged) {
            return redirectWithFlash(context, siteHref(name), {
              notice: `Nothing to do: the content of ${which} is what ${name} shows already, so no revision was made.`,
            });
          }
          // A draft was never live, so it is not live "again".
          const again = target && !target.draft ? 'again ' : '';
          return redirectWithFlash(context, siteHref(name), {
            notice: `Rolled back: the content of ${which} is live ${again}as revision ${result.revision.number}.`,
          });
        }),
    },
    {
      // Step one of deleting a revision: a page that asks, with what it does.
      method: 'GET',
      path: '/sites/{name}/revisions/{number}/delete',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const number = context.request.params[1]!;
        const site = await ops.sites.get(context.caller, name);
        if (!('name' in site)) throw new Error('claim poll for a signed-in person');
        // The revision as the listing shows it (in reach, not deleted), however far back it is.
        let revision: RevisionView | undefined;
        let cursor: string | null | undefined;
        while (/^[1-9]\d{0,8}$/.test(number) && revision === undefined && cursor !== null) {
          const listed = await ops.revisions.list(context.caller, site.name, { limit: 200, cursor: cursor ?? undefined });
          revision = listed.revisions.find((r) => r.number === Number(number));
          cursor = listed.next_cursor;
        }
        const back = { href: `/sites/${site.name}`, label: `Back to ${site.name}` };
        if (!revision) return messagePage(context, 404, 'No such revision', html`<p>${site.name} has no revision ${number} within its history.</p>`, back);
        if (!site.permissions.includes('delete_revision'))
          return messagePage(context, 403, 'Owners only', html`<p>Only an owner of ${site.name} can delete its revisions.</p>`, back);
        if (revision.live)
          return messagePage(
            context,
            409,
            'This revision is live',
            html`<p>Revision ${revision.number} is what ${site.name} shows now, so it cannot be deleted. Roll back to another revision or promote a draft first.</p>`,
            back,
          );
        return page(context, {
          title: `Delete revision ${revision.number} of ${site.name}`,
          current: 'sites',
          body: html`<h1>Delete revision ${revision.number} of ${site.name}?</h1>
<p>Revision ${revision.number} (${fileCount(revision.files)}, ${formatBytes(revision.bytes)}, published ${timeOf(revision.created_at)} by ${revision.created_by}) will be gone for good: its preview address answers “gone” at once, it cannot be rolled back to or promoted, and its files are deleted unless another revision has the same ones. The live site does not change. Its number is not used again.</p>
<form method="post" action="/sites/${site.name}/revisions/${revision.number}/delete" class="button-row">
  ${csrfField(context.formToken)}
  <input type="hidden" name="revision" value="${revision.id}">
  <button type="submit" class="button-danger">Delete revision ${revision.number}</button>
  <a href="/sites/${site.name}" class="button-secondary">Cancel</a>
</form>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/sites/{name}/revisions/{number}/delete',
      handle: (context) =>
        act(context, async (name, form) => {
          try {
            const result = await ops.revisions.delete(context.caller, name, form.get('revision') ?? '');
            return redirectWithFlash(context, siteHref(name), {
              notice: `Revision ${result.revision.number} was deleted: its preview address now answers “gone”.`,
            });
          } catch (err) {
            // Made live meanwhile (a rollback or promote since the page was shown).
            if ((err as { code?: string }).code !== 'conflict') throw err;
            return redirectWithFlash(context, siteHref(name), {
              notice: 'That revision is live now, so it was not deleted. Make another revision live first.',
            });
          }
        }),
    },
    {
      method: 'POST',
      path: '/sites/{name}/rename',
      handle: (context) =>
        act(
          context,
          async (name, form) => {
            const result = await ops.sites.rename(context.caller, name, (form.get('name') ?? '').trim());
            return redirectWithFlash(context, siteHref(result.site.name), {
              notice: `Renamed. The old address of ${result.previous_name} now redirects here.`,
            });
          },
          (err, form) => ({ errors: [{ field: 'rename', message: err.message }], rename: form.get('name') ?? '' }),
        ),
    },
    {
      method: 'POST',
      path: '/sites/{name}/delete',
      handle: (context) =>
        act(context, async (name) => {
          const request = await ops.sites.requestDeletion(context.caller, name);
          return redirect(`/approve/${request.approval.token}`);
        }),
    },
    {
      method: 'POST',
      path: '/sites/{name}/invites',
      handle: (context) =>
        act(
          context,
          async (name, form) => {
            const result = await ops.members.invite(context.caller, name, { email: form.get('email') ?? '', role: form.get('role') ?? '' });
            return redirectWithFlash(context, siteHref(name), { notice: `An invitation was e-mailed to ${result.invite.email}.` });
          },
          (err, form) => ({
            errors: [{ field: err.details?.field === 'role' ? 'invite-role' : 'invite-email', message: err.message }],
            inviteEmail: form.get('email') ?? '',
            inviteRole: form.get('role') ?? '',
          }),
        ),
    },
    {
      method: 'POST',
      path: '/sites/{name}/invites/revoke',
      handle: (context) =>
        act(context, async (name, form) => {
          const result = await ops.members.revokeInvite(context.caller, name, form.get('email') ?? '');
          return redirectWithFlash(context, siteHref(name), { notice: `The invitation for ${result.revoked} was withdrawn.` });
        }),
    },
    {
      // Step one of removing a member: a confirmation token, then a page that asks.
      method: 'POST',
      path: '/sites/{name}/members/remove',
      handle: (context) =>
        act(context, async (name, form) => {
          const email = form.get('email') ?? '';
          const confirm = form.get('confirm') ?? undefined;
          const result = await ops.members.remove(context.caller, name, email, confirm);
          if ('confirm_token' in result) {
            return redirect(
              `/sites/${encodeURIComponent(name)}/members/remove?email=${encodeURIComponent(email)}&confirm=${encodeURIComponent(result.confirm_token)}`,
            );
          }
          return redirectWithFlash(context, siteHref(name), { notice: `${result.removed} no longer has access to this site.` });
        }),
    },
    {
      method: 'GET',
      path: '/sites/{name}/members/remove',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const email = context.request.query.get('email') ?? '';
        const confirm = context.request.query.get('confirm') ?? '';
        const members = ops.members.list(context.caller, name);
        const member = members.members.find((m) => m.email === email);
        // The address in the link is not repeated back: only a real member's is shown.
        if (!member || !confirm)
          return messagePage(context, 404, 'Not a member', html`<p>That address is not a member of ${name}.</p>`, {
            href: `/sites/${name}`,
            label: `Back to ${name}`,
          });
        return page(context, {
          title: `Remove ${email}`,
          current: 'sites',
          body: html`<h1>Remove ${email} from ${name}?</h1>
<p>${email} is ${roleWithArticle(member.role)} of ${name}. Once removed, they can no longer see or change the site. This confirmation expires in 5 minutes.</p>
<form method="post" action="/sites/${name}/members/remove" class="button-row">
  ${csrfField(context.formToken)}
  <input type="hidden" name="email" value="${email}">
  <input type="hidden" name="confirm" value="${confirm}">
  <button type="submit" class="button-danger">Remove ${email}</button>
  <a href="/sites/${name}" class="button-secondary">Cancel</a>
</form>`,
        });
      },
    },
  ];
}
