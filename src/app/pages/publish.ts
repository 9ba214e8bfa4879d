import { html } from 'hono/html';
import { toErrorBody } from '../../errors.js';
import { loggedPath } from '../../http/index.js';
import { ANONYMOUS_LIFETIME_MS, isRulesFile, MAX_REQUEST_BYTES, PLAN_LIMITS, PLAN_TITLES, type Plan } from '../../rules/index.js';
import type { DeployView } from '../../contract/index.js';
import { formatBytes, type DeployBody, type PendingDeploy } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, withFlash, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import type { DeployFlash } from '../flash.js';
import { csrfField, errorSummary, fieldError, fileCount, invalidAttrs, timeOf, type FieldError, type Html } from '../layout.js';
import { jsonResponse, type AppResponse } from '../response.js';
import { tokensMatch } from '../security.js';
import { ARCHIVE_FIELD, uploadRefusal } from '../upload.js';

/**
 * Drop to publish: a person without a terminal publishes a folder or an archive from the browser.
 * The page's script packs a folder into one tar.gz and sends it as the body (with progress); with
 * the script off, the form sends an archive as `multipart/form-data`. Either way the upload goes
 * through the deploy operation the API uses: the same limits, checks and messages.
 */

export { ARCHIVE_FIELD };
/** A cookie holds about 4 KB: the result page lists this many skipped paths and counts the rest. */
const SKIPPED_SHOWN = 8;
const SKIPPED_PATH_CHARS = 160;
/** Folders the page's script left out before packing, as it reports them (display only). */
const LEFT_OUT_MAX = 20;

export interface DropZoneOptions {
  action: string;
  heading: string;
  /** Why and what: the line under the heading. */
  lead: Html | string;
  /** The live revision a drop onto a site's page is based on. */
  baseRevision?: string;
  errors?: readonly FieldError[];
  /** The heading level: a section of a page (2) or the page's own (1). */
  level?: 1 | 2;
  /** The plan whose limits the drop is held to: `anonymous` for a person signed out. */
  plan: Plan;
}

const count = (n: number): string => n.toLocaleString('en-GB');

/** What one drop may hold, in people's words, from the plan's limits. */
function limitsHint(plan: Plan): Html {
  const limits = PLAN_LIMITS[plan];
  if (plan === 'anonymous') {
    const free = PLAN_LIMITS.free;
    return html`Without an account a site can hold at most ${count(limits.maxFiles)} files and ${formatBytes(limits.maxSiteBytes)} in all. Signed in, a free account allows ${count(free.maxFiles)} files and ${formatBytes(free.maxSiteBytes)} per site.`;
  }
  const perSite = Math.min(limits.maxSiteBytes, MAX_REQUEST_BYTES);
  const upload = limits.maxSiteBytes > MAX_REQUEST_BYTES ? ' per upload' : '';
  return html`On the ${PLAN_TITLES[plan]} plan: at most ${count(limits.maxFiles)} files and ${formatBytes(perSite)}${upload}, ${formatBytes(limits.maxFileBytes)} per file.`;
}

/**
 * The drop zone: without script, a form that uploads an archive; the script adds a folder
 * chooser, dragging and dropping, packing and a progress bar (src/web/assets/drop.js).
 */
export function dropZone(context: PageContext, options: DropZoneOptions): Html {
  const errors = options.errors ?? [];
  const title = options.level === 1 ? html`<h1 id="publish-title">${options.heading}</h1>` : html`<h2 id="publish-title">${options.heading}</h2>`;
  return html`<section class="drop" aria-labelledby="publish-title">
${title}
<p>${options.lead}</p>
<form method="post" action="${options.action}" enctype="multipart/form-data" class="drop-form" data-drop data-max-bytes="${MAX_REQUEST_BYTES}" novalidate>
  ${csrfField(context.formToken)}
  ${options.baseRevision ? html`<input type="hidden" name="base_revision" value="${options.baseRevision}">` : ''}
  <div class="drop-zone" data-drop-zone>
    <p class="drop-hint" data-js-only hidden><strong>Drag a folder, or a .zip or .tar.gz archive, here</strong>, or choose one below.</p>
    <div class="field">
      <label for="${ARCHIVE_FIELD}">Archive of the site (.zip or .tar.gz)</label>
      <p class="hint" id="${ARCHIVE_FIELD}-hint">With <code>index.html</code> at the top, or in one folder. ${limitsHint(options.plan)}</p>
      ${fieldError(errors, ARCHIVE_FIELD)}
      <input type="file" id="${ARCHIVE_FIELD}" name="${ARCHIVE_FIELD}" accept=".zip,.tar.gz,.tgz,.tar,application/zip,application/gzip,application/x-tar" aria-describedby="${ARCHIVE_FIELD}-hint" ${invalidAttrs(errors, ARCHIVE_FIELD)}>
    </div>
    <div class="button-row">
      <button type="submit">Publish the archive</button>
      <span data-js-only hidden class="folder-choice">
        <input type="file" id="folder" class="folder-input" webkitdirectory multiple data-folder>
        <label for="folder" class="button-secondary">Choose a folder…</label>
      </span>
    </div>
  </div>
  <div class="drop-status" data-drop-status hidden>
    <p data-drop-message aria-live="polite"></p>
    <progress max="100" value="0" data-drop-progress aria-label="Upload progress"></progress>
  </div>
  <div class="error-summary" data-drop-error role="alert" tabindex="-1" hidden></div>
</form>
</section>`;
}

/** Whether the answer goes to the page's script (JSON) rather than to a plain form post. */
function wantsJson(context: PageContext): boolean {
  return /\bapplication\/json\b/i.test(context.request.headers.accept ?? '');
}

/** The folders the script reports it left out (`node_modules/`, `.git/`): short, plain paths only. */
function leftOutFolders(context: PageContext): string[] {
  const raw = context.request.headers['x-plinth-left-out'] ?? '';
  return raw
    .split(',')
    .map((path) => path.trim())
    .filter((path) => /^[^\u0000-\u001f\u007f]{1,200}\/$/.test(path) && !path.includes('..'))
    .slice(0, LEFT_OUT_MAX);
}

function flashOf(view: DeployView, leftOut: readonly string[], created: boolean): DeployFlash {
  const skipped = [...leftOut, ...view.skipped.filter((path) => !leftOut.includes(path))];
  return {
    name: view.site.name,
    url: view.site.url,
    number: view.revision.number,
    revision: view.revision.id,
    files: view.revision.files,
    bytes: view.revision.bytes,
    created,
    ...(view.claim_url ? { claimUrl: view.claim_url } : {}),
    ...(view.site.expires_at ? { expiresAt: view.site.expires_at } : {}),
    skipped: skipped.slice(0, SKIPPED_SHOWN).map((path) => (path.length > SKIPPED_PATH_CHARS ? `${path.slice(0, SKIPPED_PATH_CHARS)}…` : path)),
    skippedMore: Math.max(0, skipped.length - SKIPPED_SHOWN),
  };
}

export interface UploadTarget {
  /** Set for a drop onto a site's page: a new revision of that site. */
  site?: string;
  /** The page to show again, with the error by the archive field, when a plain form upload is refused. */
  refused: (errors: FieldError[], status: number) => Promise<AppResponse>;
}

/**
 * Takes one drop: checks the form token (a header from the script, a field of a plain form that
 * comes before its file) and admits the deploy before the archive is read (401, 403, 404, 409 and
 * the anonymous caps cost no upload),
 * and publishes through the deploy operation. The script gets JSON (SPEC 7's error shape on a
 * refusal); a plain form gets post/redirect/get, or its page again with the error.
 */
export async function receiveUpload(context: PageContext, target: UploadTarget): Promise<AppResponse> {
  const { ops } = context.deps;
  const { request } = context;
  const upload = request.upload!;
  const json = wantsJson(context);
  const expired = (): AppResponse =>
    json
      ? jsonResponse({ error: { code: 'forbidden', message: 'This form has expired. Nothing was published. Reload the page and try again.' } }, 403)
      : messagePage(context, 403, 'This form has expired', 'Nothing was published. Go back, reload the page and try again.', {
          href: request.path.replace(/\/publish$/, '') || '/',
          label: 'Reload the page',
        });
  try {
    // A body declared over the limit is refused before anything else.
    const refused = uploadRefusal(upload);
    if (refused) throw refused;
    let pending: PendingDeploy;
    let archive: DeployBody;
    if (upload.body) {
      // The script sends the archive as the body and the form token in a header: checked, and
      // the deploy admitted, before a byte of the body matters.
      if (!tokensMatch(context.formToken, request.headers['x-csrf-token'])) return expired();
      pending = await ops.deploy.begin({
        caller: context.caller,
        network: context.network,
        bodyKind: 'archive',
        site: target.site,
        baseRevision: request.headers['x-base-revision'],
      });
      archive = await upload.body.done;
    } else {
      // A plain form: its fields come before the archive, so the token and the deploy's admission
      // (anonymous caps included) are checked on the body's first bytes, not after 90 MB.
      const head = await upload.form.head;
      if (!tokensMatch(context.formToken, head.fields.get('csrf'))) return expired();
      const noArchive = async (): Promise<AppResponse> => {
        const message = 'Choose a .zip or .tar.gz archive of your site.';
        return json ? jsonResponse({ error: { code: 'bad_request', message } }, 400) : target.refused([{ field: ARCHIVE_FIELD, message }], 400);
      };
      if (!head.fileFollows) return noArchive();
      pending = await ops.deploy.begin({
        caller: context.caller,
        network: context.network,
        bodyKind: 'archive',
        site: target.site,
        baseRevision: head.fields.get('base_revision'),
      });
      const file = await upload.form.done;
      if (!file) return noArchive();
      archive = file;
    }
    const outcome = await pending.finish(archive);
    // An archive is one whole deploy: only a manifest's part answers without a revision.
    if (outcome.revisionId === undefined) throw new Error('a dropped archive was answered as a part of a manifest');
    const flash = { deploy: flashOf(outcome.view, json ? leftOutFolders(context) : [], target.site === undefined) };
    context.deps.log.info({ site: outcome.view.site.name, revision: outcome.revisionId, signedIn: context.person !== undefined }, 'app.dropped');
    return json ? withFlash(context, jsonResponse({ next: '/publish/done' }), flash) : redirectWithFlash(context, '/publish/done', flash);
  } catch (err) {
    const { status, body, headers, internal } = toErrorBody(err);
    if (internal) {
      context.deps.log.error({ err, path: loggedPath(request.path) }, 'app.drop_failed');
      throw err;
    }
    // People read these, not agents: the same refusal, in the words of a drop.
    const message = dropMessage(body.error, body.agent_message, context.person !== undefined);
    if (json) return jsonResponse({ ...body, error: { ...body.error, message } }, status, headers);
    return target.refused([{ field: ARCHIVE_FIELD, message }], status);
  }
}

/** The operation's message, in a person's words and with the way on a person (not an agent) can take. */
function dropMessage(error: { code: string; message: string; details?: Record<string, unknown> }, agentMessage: string | undefined, signedIn: boolean): string {
  const { code, message } = error;
  const reason = error.details?.reason;
  if (code === 'conflict') return `${message} Reload the page to see the new live revision, then drop again.`;
  if (reason === 'unsupported_format') return 'This is not a .zip, .tar.gz or .tar archive. Choose an archive of your site, or drop its folder.';
  // Refused lines of _redirects or _headers: each one quoted with what it needs, as the API, MCP
  // and the CLI give it (the agent message is a person's words there, and names no endpoint).
  if (Array.isArray(error.details?.lines) && agentMessage) return `${message} ${agentMessage}`;
  // _redirects and _headers have one cap on every plan: signing in would not let one over it in
  // (a refusal of the site's total names its largest file too, and has its total).
  const file = error.details?.file;
  if (code === 'too_large' && typeof file === 'string' && isRulesFile(file) && error.details?.total === undefined && agentMessage) return agentMessage;
  if (code === 'too_large' && !signedIn) {
    const anon = PLAN_LIMITS.anonymous;
    const free = PLAN_LIMITS.free;
    return (
      `${message} Without an account a site can hold at most ${count(anon.maxFiles)} files and ${formatBytes(anon.maxSiteBytes)} in all. ` +
      `Sign in to publish more: a free account allows ${count(free.maxFiles)} files and ${formatBytes(free.maxSiteBytes)} per site.`
    );
  }
  return message;
}

export function publishRoutes(_deps: AppDeps): PageRoute[] {
  function publishPage(context: PageContext, errors: FieldError[] = [], status = 200): AppResponse {
    const signedIn = context.person !== undefined;
    const lead = signedIn
      ? html`The site goes into your account (${context.person!.account.email}) and does not expire.`
      : html`No account needed: the site is live at once, and kept for ${ANONYMOUS_LIFETIME_MS / 3600_000} hours unless you claim it with the link you get. <a href="/login?next=%2Fpublish">Sign in</a> to publish into your account instead.`;
    return page(
      context,
      {
        title: 'Publish a site',
        current: signedIn ? 'sites' : undefined,
        scripts: ['drop.js'],
        body: html`${errorSummary(errors)}
${dropZone(context, { action: '/publish', heading: 'Publish a site', lead, errors, level: 1, plan: signedIn ? context.person!.account.plan : 'anonymous' })}`,
      },
      status,
    );
  }

  function resultPage(context: PageContext): AppResponse {
    const result = context.flash?.deploy;
    if (!result) {
      return messagePage(context, 404, 'Nothing to show here', 'This page shows what a drop published, right after it. Publish a folder or an archive first.', {
        href: '/publish',
        label: 'Publish a site',
      });
    }
    const signedIn = context.person !== undefined;
    const warnings: Html[] = [];
    if (result.expiresAt) {
      warnings.push(
        html`This site is temporary: it will be deleted on ${timeOf(result.expiresAt)} unless someone claims it with the link above. The link is shown only here; keep it somewhere safe.`,
      );
    }
    if (!result.created) warnings.push(html`Every drop replaces the whole site: files that were not in this upload are no longer published.`);
    if (result.skipped.length > 0) warnings.push(html`Some files were left out on purpose and were not published (listed below).`);
    const body = html`<h1>${result.created ? 'Your site is live' : `Revision ${result.number} is live`}</h1>
<dl class="facts">
  <dt>Address</dt><dd><a href="${result.url}" rel="noopener">${result.url}</a></dd>
  <dt>Revision</dt><dd>#${result.number} <span class="muted">(<code>${result.revision}</code>)</span></dd>
  <dt>Content</dt><dd>${fileCount(result.files)}, ${formatBytes(result.bytes)}</dd>
</dl>
<p class="button-row"><a class="button" href="${result.url}" rel="noopener">Visit ${result.name}</a>${
      signedIn ? html`<a class="button-secondary" href="/sites/${result.name}">Manage ${result.name}</a>` : ''
    }</p>
${
  result.claimUrl
    ? html`<div class="panel panel-success">
  <h2>Keep this site: claim it</h2>
  <p>Open the claim link and sign in (an account is made for a new address) to keep the site for good and update it later.</p>
  <p><code class="token" id="claim-link">${result.claimUrl}</code></p>
  <p class="button-row"><a class="button" href="${result.claimUrl}">Claim ${result.name}</a><button type="button" class="button-secondary" data-copy="claim-link" data-js-only hidden>Copy the claim link</button></p>
</div>`
    : ''
}
${
  warnings.length > 0
    ? html`<h2>Good to know</h2>
<ul class="warnings">${warnings.map((warning) => html`<li>${warning}</li>`)}</ul>`
    : ''
}
${
  result.skipped.length > 0
    ? html`<h2>Left out (never published)</h2>
<ul>${result.skipped.map((path) => html`<li><code>${path}</code></li>`)}</ul>
${result.skippedMore > 0 ? html`<p>and ${result.skippedMore.toLocaleString('en-GB')} more.</p>` : ''}
<p class="hint">Plinth never publishes version-control folders, <code>node_modules/</code>, <code>.env</code> files, keys or other dotfiles, nor source maps (<code>.map</code> files): a source map hands every visitor the site's original source code, comments included. Pages work without them; only a browser's developer tools use them.</p>`
    : ''
}
<p><a href="/publish">Publish another site</a>${signedIn ? html` · <a href="/">Your sites</a>` : ''}</p>`;
    // Kept for a reload (the cookie lasts minutes): the claim link is not shown anywhere else.
    return page(context, {
      title: result.created ? 'Your site is live' : `Revision ${result.number} is live`,
      current: signedIn ? 'sites' : undefined,
      body,
      keepFlash: true,
    });
  }

  return [
    { method: 'GET', path: '/publish', handle: async (context) => publishPage(context) },
    {
      method: 'POST',
      path: '/publish',
      upload: true,
      handle: (context) => receiveUpload(context, { refused: async (errors, status) => publishPage(context, errors, status) }),
    },
    { method: 'GET', path: '/publish/done', handle: async (context) => resultPage(context) },
  ];
}
