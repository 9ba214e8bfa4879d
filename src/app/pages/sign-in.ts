import { html } from 'hono/html';
import { setCookie } from '../../http/index.js';
import { isSiteNameSyntax, localReturnPath } from '../../rules/index.js';
import type { AccountRecord } from '../../store/index.js';
import { SESSION_LIFETIME_MS, SIGN_IN_LIFETIME_MS } from '../../sites/index.js';
import { cookieNames, cookieOptions, messagePage, page, redirectWithFlash, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, invalidAttrs, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import { redirect, type AppResponse } from '../response.js';

/**
 * The site (or custom domain) a members-only site's sign-in hop leads back to, when `next` is that
 * hop (`/site-access?site=…`); undefined for any other page.
 */
function memberSiteOf(next: string | undefined): string | undefined {
  if (next === undefined) return undefined;
  const url = new URL(next, 'http://app.invalid');
  if (url.pathname !== '/site-access') return undefined;
  const site = url.searchParams.get('site') ?? '';
  if (!isSiteNameSyntax(site)) return undefined;
  const domain = url.searchParams.get('domain');
  return domain !== null && /^(?=.{4,253}$)[a-z0-9-]+(?:\.[a-z0-9-]+)+$/.test(domain) ? domain : site;
}

/**
 * Sign-in by e-mail (no passwords): the address gets a one-time link and a 6-digit code, both
 * valid 15 minutes. The link opens a page with a button (a GET never signs anyone in, so mail
 * scanners that follow links do nothing); the code is for a person who reads mail on another
 * device and types it into the browser that asked. The first sign-in of an address creates a
 * Free account. Every sign-in starts a new session (no fixation). The link and the asking
 * browser's cookie hold two different secrets: the cookie alone signs nobody in, so a browser
 * that asks for someone else's address cannot finish without that mailbox's code.
 */
export function signInRoutes(deps: AppDeps): PageRoute[] {
  const { ops, config } = deps;
  const names = cookieNames(config);
  const minutes = SIGN_IN_LIFETIME_MS / 60_000;

  function loginForm(context: PageContext, values: { email?: string; next?: string }, errors: FieldError[], status = 200): AppResponse {
    // A visitor sent here by a members-only site is told which site, and not offered publishing.
    const visiting = memberSiteOf(values.next);
    return page(
      context,
      {
        title: visiting ? `Sign in to open ${visiting}` : 'Sign in',
        body: html`${errorSummary(errors)}
${
  visiting
    ? html`<h1>Sign in to open ${visiting}</h1>
<p>${visiting} is visible to its members only. Sign in with the e-mail address its owner invited; we will send you a link and a 6-digit code, no password is needed.</p>`
    : html`<h1>Sign in to Plinth</h1>
<p>Enter your e-mail address. We will send you a link and a 6-digit code to sign in; no password is needed.
If you have no account yet, this creates a free one.</p>`
}
<form method="post" action="/login" novalidate>
  ${csrfField(context.formToken)}
  ${values.next ? html`<input type="hidden" name="next" value="${values.next}">` : ''}
  <div class="field">
    <label for="email">E-mail address</label>
    ${fieldError(errors, 'email')}
    <input id="email" name="email" type="email" autocomplete="email" spellcheck="false" required value="${values.email ?? ''}" ${invalidAttrs(errors, 'email')}>
  </div>
  <button type="submit">Send me a sign-in link</button>
</form>
${
  visiting
    ? ''
    : html`<h2>No account yet?</h2>
<p><a href="/publish">Publish a site without an account</a>: drop a folder or an archive, and claim the site later to keep it.</p>`
}`,
      },
      status,
    );
  }

  function codeForm(context: PageContext, email: string, errors: FieldError[], status = 200): AppResponse {
    return page(
      context,
      {
        title: 'Check your e-mail',
        body: html`${errorSummary(errors)}
<h1>Check your e-mail</h1>
<p>We sent a sign-in link to <strong>${email}</strong>. Open it on this device to sign in, or enter the 6-digit code from the e-mail here.
The link and the code work once, for ${minutes} minutes.</p>
<form method="post" action="/login/code" novalidate>
  ${csrfField(context.formToken)}
  <div class="field">
    <label for="code">6-digit code</label>
    ${fieldError(errors, 'code')}
    <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="7" class="input-short" required ${invalidAttrs(errors, 'code')}>
  </div>
  <button type="submit">Sign in</button>
</form>
<p><a href="/login">Use another address or send a new link</a></p>
${
  config.app.outboxPage
    ? html`<div class="panel"><h2>No e-mail on this server</h2><p>This is a local install without a mail relay: e-mails are not sent but kept in the <a href="/outbox">outbox</a>. Open it to find the sign-in link and code.</p></div>`
    : ''
}`,
      },
      status,
    );
  }

  /** A new session for the account; any session the browser had is ended first. */
  async function signedIn(context: PageContext, account: AccountRecord, next: string | undefined): Promise<AppResponse> {
    const previous = context.request.cookies[names.session];
    if (previous) await ops.people.endSession(previous);
    const { cookie } = await ops.people.createSession(account);
    const response = redirect(localReturnPath(next) ?? '/');
    response.cookies.push(setCookie(names.session, cookie, cookieOptions(config, SESSION_LIFETIME_MS / 1000)));
    response.cookies.push(setCookie(names.signIn, '', cookieOptions(config, 0)));
    return response;
  }

  const linkProblem = (context: PageContext, message: string): AppResponse =>
    messagePage(context, 400, 'This sign-in link does not work', html`<p>${message}</p>`, { href: '/login', label: 'Send a new sign-in link' });

  return [
    {
      method: 'GET',
      path: '/login',
      async handle(context) {
        const next = localReturnPath(context.request.query.get('next'));
        if (context.person) return redirect(next ?? '/');
        // An invitation's page fills in the invited address (a value in the form, nothing more).
        const email = (context.request.query.get('email') ?? '').slice(0, 320);
        return loginForm(context, { next, email }, []);
      },
    },
    {
      method: 'POST',
      path: '/login',
      async handle(context) {
        const form = formOf(context.request);
        const email = (form.get('email') ?? '').trim();
        const next = localReturnPath(form.get('next'));
        try {
          const started = await ops.people.startSignIn({ email, next, network: context.network });
          const response = redirect('/login/check');
          response.cookies.push(setCookie(names.signIn, started.browserSecret, cookieOptions(config, minutes * 60)));
          return response;
        } catch (err) {
          const { code, message } = err as { code?: string; message: string };
          if (code === 'bad_request')
            return loginForm(context, { email, next }, [{ field: 'email', message: 'Enter an e-mail address like name@example.com.' }], 400);
          if (code === 'limit') return loginForm(context, { email, next }, [{ field: 'email', message }], 429);
          throw err;
        }
      },
    },
    {
      method: 'GET',
      path: '/login/check',
      async handle(context) {
        const pending = ops.people.pendingSignIn({ browser: context.request.cookies[names.signIn] ?? '' });
        if (!pending) return redirect('/login');
        return codeForm(context, pending.email, []);
      },
    },
    {
      method: 'POST',
      path: '/login/code',
      async handle(context) {
        const browser = context.request.cookies[names.signIn] ?? '';
        const pending = ops.people.pendingSignIn({ browser });
        if (!pending) return linkProblem(context, 'This sign-in has expired, was used, or was locked after too many wrong codes.');
        try {
          const done = await ops.people.finishSignIn({ browser, code: formOf(context.request).get('code') ?? '' });
          return signedIn(context, done.account, done.next);
        } catch (err) {
          const { code, details, message } = err as { code?: string; details?: { reason?: string }; message: string };
          if (details?.reason === 'wrong_code') return codeForm(context, pending.email, [{ field: 'code', message }], 400);
          if (code === 'limit') return codeForm(context, pending.email, [{ field: 'code', message }], 429);
          return linkProblem(context, message);
        }
      },
    },
    {
      method: 'GET',
      path: '/login/verify',
      async handle(context) {
        const token = context.request.query.get('token') ?? '';
        const pending = ops.people.pendingSignIn({ link: token });
        if (!pending) return linkProblem(context, 'The link has expired (links last 15 minutes), was already used, or was locked after too many wrong codes.');
        return page(context, {
          title: 'Sign in',
          body: html`<h1>Sign in to Plinth</h1>
<p>You are signing in as <strong>${pending.email}</strong>.</p>
<form method="post" action="/login/verify">
  ${csrfField(context.formToken)}
  <input type="hidden" name="token" value="${token}">
  <button type="submit">Sign in as ${pending.email}</button>
</form>`,
        });
      },
    },
    {
      method: 'POST',
      path: '/login/verify',
      async handle(context) {
        try {
          const done = await ops.people.finishSignIn({ link: formOf(context.request).get('token') ?? '' });
          return signedIn(context, done.account, done.next);
        } catch (err) {
          return linkProblem(context, (err as Error).message);
        }
      },
    },
    {
      method: 'POST',
      path: '/logout',
      async handle(context) {
        const cookie = context.request.cookies[names.session];
        if (cookie) await ops.people.endSession(cookie);
        const response = await redirectWithFlash(context, '/login', { notice: 'You are signed out.' }, { signedOut: true });
        response.cookies.push(setCookie(names.session, '', cookieOptions(config, 0)));
        return response;
      },
    },
  ];
}
