import { randomBytes } from 'node:crypto';
import { html } from 'hono/html';
import type { Config } from '../config.js';
import { toErrorBody } from '../errors.js';
import { cookieName, loggedPath, setCookie, type CookieOptions, type UploadPacer } from '../http/index.js';
import type { Logger } from '../log.js';
import type { Caller, Operations, Session } from '../sites/index.js';
import type { PageAssets } from '../web/index.js';
import { FLASH_MAX_AGE_SECONDS, sealFlash, type Flash } from './flash.js';
import { renderShell, type Html, type ShellOptions } from './layout.js';
import type { AppRequest } from './request.js';
import { htmlResponse, redirect, type AppResponse } from './response.js';

export interface AppDeps {
  ops: Operations;
  config: Readonly<Config>;
  log: Logger;
  /** The shared stylesheet, script and icon. */
  assets: PageAssets;
  /** Slows uploads while the thread is busy serving visitors. */
  pacer?: UploadPacer;
}

/** Everything a page handler gets for one request. */
export interface PageContext {
  request: AppRequest;
  deps: AppDeps;
  /** The signed-in person, if any. */
  person?: Session;
  /** The caller the operations see: the person, or anonymous. */
  caller: Caller;
  /** The client's network, for per-network caps. */
  network: string;
  /** The token every form on this page carries. */
  formToken: string;
  /** Cookies the answer must set whatever the handler returns (a new form cookie). */
  cookies: string[];
  /** What the page before asked this one to show once (see `redirectWithFlash`). */
  flash?: Flash;
}

export type PageHandler = (context: PageContext) => Promise<AppResponse>;

export interface PageRoute {
  /** `OPTIONS` only for CORS preflights of the endpoints programs call. */
  method: 'GET' | 'POST' | 'OPTIONS';
  path: string;
  handle: PageHandler;
  /**
   * `false` for endpoints called by programs rather than our own forms (OAuth token, registration,
   * revocation): they carry no cookies and no form token, so the cross-site check is moot there.
   */
  form?: boolean;
  /**
   * An upload (drop to publish): the body arrives through the deploy intake (the thread's body
   * memory, else a spool file) rather than as a small form, and the handler checks the form token
   * itself, since it may sit inside a multipart body.
   */
  upload?: boolean;
}

/** Cookie names: the `__Host-` prefix pins them to the app host over https. */
export function cookieNames(config: Readonly<Config>): { session: string; form: string; signIn: string; flash: string } {
  const secure = config.app.secureCookies;
  return {
    session: cookieName('plinth_session', secure),
    form: cookieName('plinth_form', secure),
    signIn: cookieName('plinth_signin', secure),
    flash: cookieName('plinth_flash', secure),
  };
}

/**
 * The app's cookies have the attributes of every cookie Plinth sets (http `setCookie`): host-only,
 * HttpOnly, SameSite=Lax, never sent to the site domain or to other sites' forms.
 */
export function cookieOptions(config: Readonly<Config>, maxAgeSeconds: number): CookieOptions {
  return { secure: config.app.secureCookies, maxAgeSeconds };
}

export function newFormCookie(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * A page in the shell, with the person's navigation when signed in. A flash from the page before
 * is shown here (its notice, unless the page has its own) and then dropped.
 */
export function page(context: PageContext, options: Omit<ShellOptions, 'formToken' | 'email'> & { keepFlash?: boolean }, status = 200): AppResponse {
  const { keepFlash, ...shell } = options;
  const notice = shell.notice ?? context.flash?.notice;
  const response = htmlResponse(
    renderShell(context.deps.assets, {
      ...shell,
      notice,
      formToken: context.formToken,
      email: context.person?.account.email,
      docsUrl: context.deps.config.publicUrls.docs,
    }),
    status,
  );
  if (context.flash && !keepFlash) response.cookies.push(setCookie(cookieNames(context.deps.config).flash, '', cookieOptions(context.deps.config, 0)));
  return response;
}

/** The key a flash is sealed with: the session's secret, or the server's form key signed out. */
export async function flashKey(context: PageContext, signedOut = false): Promise<string> {
  return context.person && !signedOut ? context.person.record.csrfSecret : context.deps.ops.people.formKey();
}

/**
 * Post/redirect/get with something to show once on the page it lands on. `signedOut` seals it
 * for the browser's next, signed-out request (after sign-out).
 */
export async function redirectWithFlash(context: PageContext, location: string, flash: Flash, options: { signedOut?: boolean } = {}): Promise<AppResponse> {
  return withFlash(context, redirect(location), flash, options);
}

/** Adds a flash for the next page to any answer (the drop script's JSON answer navigates itself). */
export async function withFlash(context: PageContext, response: AppResponse, flash: Flash, options: { signedOut?: boolean } = {}): Promise<AppResponse> {
  const sealed = sealFlash(await flashKey(context, options.signedOut), flash);
  response.cookies.push(setCookie(cookieNames(context.deps.config).flash, sealed, cookieOptions(context.deps.config, FLASH_MAX_AGE_SECONDS)));
  return response;
}

/** Signed out: go and sign in, then come back here. */
export function toSignIn(context: PageContext): AppResponse {
  const here = `${context.request.path}${context.request.query.size > 0 ? `?${context.request.query.toString()}` : ''}`;
  return redirect(`/login?next=${encodeURIComponent(here)}`);
}

/** A page that explains a refusal (expired link, wrong account…) with a way on. */
export function messagePage(context: PageContext, status: number, title: string, body: Html | string, next?: { href: string; label: string }): AppResponse {
  return page(
    context,
    {
      title,
      body: html`<h1>${title}</h1>
<div class="message">${body}</div>
${next ? html`<p><a class="button" href="${next.href}">${next.label}</a></p>` : ''}`,
    },
    status,
  );
}

/** Any error a handler did not turn into a form message: a plain page with SPEC 7's wording. */
export function errorPage(context: PageContext, err: unknown): AppResponse {
  const { status, body, headers, internal } = toErrorBody(err);
  if (internal) context.deps.log.error({ err, path: loggedPath(context.request.path) }, 'app.failed');
  const titles: Record<number, string> = {
    400: 'That did not work',
    403: 'Not allowed',
    404: 'Page not found',
    410: 'No longer available',
    413: 'Too large',
    429: 'Too many attempts',
    503: 'Not available right now',
  };
  const response = messagePage(context, status, titles[status] ?? 'Something went wrong', html`<p>${body.error.message}</p>`, {
    href: '/',
    label: 'Go to your sites',
  });
  // Retry-After of a 429 or a 503 (a full disk, PostgreSQL or the bucket away), as the API sends it.
  Object.assign(response.headers, headers);
  return response;
}
