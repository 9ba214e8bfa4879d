import { html } from 'hono/html';
import { domainUrl, siteUrl } from '../../config.js';
import { isSiteNameSyntax, PREVIEW_LINK_LIFETIME_MS, safeReturnPath } from '../../rules/index.js';
import type { SiteView } from '../../contract/index.js';
import { messagePage, page, redirectWithFlash, toSignIn, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, fieldError, invalidAttrs, type FieldError, type Html } from '../layout.js';
import { formOf } from '../request.js';
import { redirect, type AppResponse } from '../response.js';
import { pageHeaders } from '../security.js';

/**
 * The site page's access section (who may see the site), its promote action, and the app's half
 * of the members-only hop: `/site-access` hands a signed-in member a single-use ticket for the
 * site host. The app's own session cookie never leaves the app host.
 */

const siteHref = (name: string): string => `/sites/${encodeURIComponent(name)}`;

const MODE_WORDS = {
  public: 'Public: anyone with the address',
  password: 'Password: visitors type a password you choose',
  members: 'Members only: people who are members of this site, signed in',
} as const;

const PREVIEW_WORDS = {
  public: 'Anyone with a preview address',
  members: 'Members of this site, and people you give a preview link',
} as const;

/** The "Who can see it" section of the site page. */
export function accessSection(context: PageContext, site: SiteView, errors: FieldError[] = []): Html {
  const { mode, previews } = context.deps.ops.access.get(context.caller, site.name).access;
  // A protected site's previews follow its own access whatever the setting says.
  const previewsNow = mode === 'public' ? PREVIEW_WORDS[previews] : 'The same people as the site';
  if (!site.permissions.includes('set_access')) {
    return html`<h2>Who can see it</h2><p>${MODE_WORDS[mode]}.${site.claimed ? '' : ' Claim the site to change this.'}</p><p>Previews of revisions: ${previewsNow}.</p>`;
  }
  const previewOption = (value: keyof typeof PREVIEW_WORDS) =>
    html`<div class="radio"><input type="radio" id="previews-${value}" name="previews" value="${value}" ${previews === value ? html`checked` : ''}><label for="previews-${value}">${PREVIEW_WORDS[value]}</label></div>`;
  const option = (value: keyof typeof MODE_WORDS) =>
    html`<div class="radio"><input type="radio" id="access-${value}" name="mode" value="${value}" ${mode === value ? html`checked` : ''}><label for="access-${value}">${MODE_WORDS[value]}</label></div>`;
  return html`<h2>Who can see it</h2>
<form method="post" action="/sites/${site.name}/access" novalidate>
  ${csrfField(context.formToken)}
  <fieldset class="field">
    <legend>Access to ${site.name} and its previews</legend>
    ${option('public')}${option('password')}${option('members')}
  </fieldset>
  <div class="field">
    <label for="access-new-password">New password</label>
    <p class="hint" id="access-new-password-hint">For “Password”: 8 to 128 characters. Saving signs every visitor out.</p>
    ${fieldError(errors, 'access-new-password')}
    <input id="access-new-password" name="password" type="password" autocomplete="new-password" aria-describedby="access-new-password-hint" ${invalidAttrs(errors, 'access-new-password')}>
  </div>
  <button type="submit">Save access</button>
</form>
<form method="post" action="/sites/${site.name}/previews" novalidate>
  ${csrfField(context.formToken)}
  <fieldset class="field">
    <legend>Who can see previews of a public site</legend>
    <p class="hint">Each revision has its own address, such as revision 2 at 2--${site.name}. While the site is public, you can keep these to members: the preview links in the revision list (and in a draft's deploy answer) then open one preview each for whoever you give them to, for ${PREVIEW_LINK_LIFETIME_MS / 86_400_000} days. Turning this off, or off and on again, ends every link. A password or members-only site's previews always follow its own access.</p>
    ${previewOption('public')}${previewOption('members')}
  </fieldset>
  <button type="submit">Save previews</button>
</form>`;
}

/** The Preview and Promote cells of one revision row. */
export function revisionActions(context: PageContext, site: SiteView, revision: { id: string; number: number; preview_url: string; draft: boolean }): Html {
  const live = revision.id === site.live_revision?.id;
  const promote =
    // Only drafts: an earlier published revision is rolled back to (a copy), one action per row.
    !live && revision.draft && site.permissions.includes('promote') && site.live_revision
      ? html`<form method="post" action="/sites/${site.name}/promote">${csrfField(context.formToken)}<input type="hidden" name="revision" value="${revision.id}"><input type="hidden" name="base_revision" value="${site.live_revision.id}"><button type="submit" class="button-secondary">Promote revision ${revision.number}</button></form>`
      : '';
  return html`<a href="${revision.preview_url}" rel="noopener">Preview revision ${revision.number}</a>${promote}`;
}

export function siteAccessRoutes(
  deps: AppDeps,
  showSite: (context: PageContext, name: string, errors: FieldError[], status: number) => Promise<AppResponse>,
): PageRoute[] {
  const { ops, config } = deps;
  return [
    {
      method: 'POST',
      path: '/sites/{name}/access',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const form = formOf(context.request);
        const mode = form.get('mode') ?? '';
        const password = form.get('password') ?? '';
        try {
          await ops.access.set(context.caller, name, mode === 'password' ? { mode, password } : { mode });
        } catch (err) {
          const error = err as { code?: string; message: string };
          if (error.code !== 'bad_request') throw err;
          return showSite(context, name, [{ field: mode === 'password' ? 'access-new-password' : 'access-public', message: error.message }], 400);
        }
        return redirectWithFlash(context, siteHref(name), { notice: `Saved: ${MODE_WORDS[mode as keyof typeof MODE_WORDS] ?? mode}.` });
      },
    },
    {
      method: 'POST',
      path: '/sites/{name}/previews',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const previews = formOf(context.request).get('previews') ?? '';
        try {
          await ops.access.set(context.caller, name, { previews });
        } catch (err) {
          const error = err as { code?: string; message: string };
          if (error.code !== 'bad_request') throw err;
          return showSite(context, name, [{ field: 'previews-public', message: error.message }], 400);
        }
        return redirectWithFlash(context, siteHref(name), {
          notice: `Saved: previews are visible to ${previews === 'members' ? 'members and preview links' : 'anyone with the address'}.`,
        });
      },
    },
    {
      method: 'POST',
      path: '/sites/{name}/promote',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const name = context.request.params[0]!;
        const form = formOf(context.request);
        try {
          const result = await ops.revisions.promote(context.caller, name, form.get('revision') ?? '', form.get('base_revision') ?? '');
          return redirectWithFlash(context, siteHref(name), { notice: `Revision ${result.revision.number} is live.` });
        } catch (err) {
          if ((err as { code?: string }).code !== 'conflict') throw err;
          return redirectWithFlash(context, siteHref(name), {
            notice: 'Someone published this site meanwhile, so nothing was promoted. Check the revisions and try again.',
          });
        }
      },
    },
    {
      // Where a members-only site sends a visitor: sign in (if needed), then one button.
      method: 'GET',
      path: '/site-access',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const query = context.request.query;
        const hop = hopOf(query);
        if (hop === undefined)
          return messagePage(context, 400, 'That link does not work', 'The link to open a site is incomplete.', { href: '/', label: 'Go to your sites' });
        // Only members see this page; everyone else learns nothing about the site.
        try {
          ops.access.get(context.caller, hop.site);
        } catch {
          return notMember(context);
        }
        // The way back: only an address of this site (a custom domain must be one of its own).
        let label: string;
        try {
          label = ops.access.hopHost(context.caller, hop.site, hop);
        } catch (err) {
          if ((err as { code?: string }).code !== 'bad_request') throw err;
          return brokenLink(context);
        }
        const response = page(context, {
          title: `Open ${hop.site}`,
          current: 'sites',
          body: html`<h1>Open ${label}</h1>
<p>${hop.preview === undefined ? hop.site : html`This preview of ${hop.site}`} is visible to its members only. You are signed in as ${context.person.account.email}, a member.</p>
<form method="post" action="/site-access">
  ${csrfField(context.formToken)}
  <input type="hidden" name="site" value="${hop.site}">
  ${hop.preview === undefined ? '' : html`<input type="hidden" name="preview" value="${String(hop.preview)}">`}
  ${hop.domain === undefined ? '' : html`<input type="hidden" name="domain" value="${hop.domain}">`}
  <input type="hidden" name="return" value="${hop.returnPath}">
  <button type="submit">Open ${label}</button>
</form>`,
        });
        // The form's redirect leads to the site host (or its custom domain): CSP form-action must allow it.
        const formActions = hop.domain === undefined ? [siteOrigins(config.publicUrls)] : [domainUrl(config.publicUrls, label)];
        response.headers = { ...response.headers, ...pageHeaders({ formActions }) };
        return response;
      },
    },
    {
      method: 'POST',
      path: '/site-access',
      async handle(context) {
        if (!context.person) return toSignIn(context);
        const hop = hopOf(formOf(context.request));
        if (hop === undefined) return brokenLink(context);
        let url: string;
        try {
          url = (await ops.access.issueTicket(context.caller, hop.site, hop, hop.returnPath)).url;
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code === 'not_found' || code === 'forbidden') return notMember(context);
          if (code === 'bad_request') return brokenLink(context);
          throw err;
        }
        return redirect(url);
      },
    },
  ];
}

/** Every site host as one CSP source: `https://*.<site domain>`. */
function siteOrigins(urls: Parameters<typeof siteUrl>[0]): string {
  return new URL(siteUrl(urls, 'x')).origin.replace('//x.', '//*.');
}

function brokenLink(context: PageContext): AppResponse {
  return messagePage(context, 400, 'That link does not work', 'The link to open a site is incomplete.', { href: '/', label: 'Go to your sites' });
}

function notMember(context: PageContext): AppResponse {
  return messagePage(context, 403, 'Not a member', 'Your account is not a member of this site, so it cannot open it. Ask an owner of the site to invite you.', {
    href: '/',
    label: 'Go to your sites',
  });
}

/** The site, preview number or custom domain, and return path of the hop, or undefined when malformed. */
function hopOf(values: URLSearchParams): { site: string; preview?: number; domain?: string; returnPath: string } | undefined {
  const site = values.get('site') ?? '';
  if (!isSiteNameSyntax(site)) return undefined;
  const previewText = values.get('preview');
  if (previewText !== null && !/^[1-9]\d{0,8}$/.test(previewText)) return undefined;
  const domain = values.get('domain');
  // A syntax check only; the operation checks that it is an active domain of the site.
  if (domain !== null && (previewText !== null || !/^(?=.{4,253}$)[a-z0-9-]+(?:\.[a-z0-9-]+)+$/.test(domain))) return undefined;
  return {
    site,
    ...(previewText !== null ? { preview: Number(previewText) } : {}),
    ...(domain !== null ? { domain } : {}),
    returnPath: safeReturnPath(values.get('return')),
  };
}
