/** The account web app on the app host (SPEC 1): pages and forms over the operations. */
import type { Config } from '../config.js';
import { toErrorBody } from '../errors.js';
import {
  type BodyMemory,
  clientNetwork,
  copyRequest,
  createRouter,
  declaredLength,
  loggedPath,
  receiveBody,
  setCookie,
  trackAbort,
  type HttpRequest,
  type HttpResponse,
  type RouteMatch,
  type UploadPacer,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { personCaller, requestBodyLimit, smallBodyLimit, type Operations } from '../sites/index.js';
import { loadPageAssets } from '../web/index.js';
import { assetRoutes } from './assets.js';
import { cookieNames, cookieOptions, errorPage, messagePage, newFormCookie, type AppDeps, type PageContext, type PageRoute } from './context.js';
import { accountRoutes } from './pages/account.js';
import { approvalRoutes } from './pages/approve.js';
import { claimRoutes } from './pages/claim.js';
import { inviteRoutes } from './pages/invite.js';
import { oauthConsentRoutes } from './pages/oauth.js';
import { deviceRoutes } from './pages/device.js';
import { oauthEndpointRoutes } from './oauth-endpoints.js';
import { outboxRoutes } from './pages/outbox.js';
import { reportRoutes } from './pages/report.js';
import { signInRoutes } from './pages/sign-in.js';
import { fileRoutes } from './pages/files.js';
import { publishRoutes } from './pages/publish.js';
import { siteRoutes } from './pages/site.js';
import { cookiesOf, formOf, type AppRequest } from './request.js';
import { writeAppResponse, type AppResponse } from './response.js';
import { openFlash } from './flash.js';
import { discardUpload, drainUpload, startUpload, type Upload } from './upload.js';
import { formToken, isCrossSite, pageHeaders, tokensMatch } from './security.js';

export interface AppOptions {
  ops: Operations;
  config: Readonly<Config>;
  log: Logger;
  /** Extra routes served on the app host (the OAuth authorization server). */
  extraRoutes?: readonly PageRoute[];
  /** Slows drop-to-publish uploads while the thread is busy serving visitors. */
  pacer?: UploadPacer;
  /** This thread's budget for bodies received into memory rather than spooled (shared with REST deploys). */
  memory?: BodyMemory;
}

export interface App {
  handle(res: HttpResponse, req: HttpRequest): void;
}

export type { PageContext, PageRoute, PageHandler, AppDeps } from './context.js';
export { page, toSignIn, messagePage } from './context.js';
export type { AppResponse } from './response.js';
export { htmlResponse, jsonResponse, redirect } from './response.js';
export { formOf, jsonOf } from './request.js';
export { csrfField, timeOf, type Html } from './layout.js';

const FORM_COOKIE_SECONDS = 24 * 3600;

export function createApp(options: AppOptions): App {
  const deps: AppDeps = { ops: options.ops, config: options.config, log: options.log, assets: loadPageAssets(), pacer: options.pacer };
  const { ops, config, log } = deps;
  const names = cookieNames(config);
  const uploads = { limit: requestBodyLimit(config, 'rest'), spool: { dir: config.spoolDir, memory: options.memory }, pacer: options.pacer };
  const formLimit = smallBodyLimit(config);
  const appOrigin = new URL(config.publicUrls.app).origin;
  const routes = [
    ...assetRoutes(deps.assets),
    ...signInRoutes(deps),
    ...accountRoutes(deps),
    ...siteRoutes(deps),
    ...publishRoutes(deps),
    ...fileRoutes(deps),
    ...claimRoutes(deps),
    ...approvalRoutes(deps),
    ...inviteRoutes(deps),
    ...reportRoutes(deps),
    ...oauthConsentRoutes(deps),
    ...deviceRoutes(deps),
    ...oauthEndpointRoutes(deps),
    ...(config.app.outboxPage ? outboxRoutes(deps) : []),
    ...(options.extraRoutes ?? []),
  ];
  const router = createRouter<PageRoute>();
  for (const route of routes) router.add(route.method, route.path, route);

  async function respond(request: AppRequest, found: RouteMatch<PageRoute>): Promise<AppResponse> {
    const route = found.kind === 'found' ? found.handler : undefined;
    // A session or sign-in another node started a moment ago counts here too.
    await ops.admission.catchUp();
    const person = await ops.people.resolveSession(request.cookies[names.session]);
    const cookies: string[] = [];
    let token: string;
    if (person) {
      token = formToken(person.record.csrfSecret, person.sessionHash);
    } else if (route?.form === false) {
      // Endpoints programs call (OAuth token, registration…) show no forms: no form cookie.
      token = '';
    } else {
      // Signed-out forms (sign-in, report) are bound to a random cookie of this browser.
      let formCookie = request.cookies[names.form];
      if (!formCookie || !/^[A-Za-z0-9_-]{32}$/.test(formCookie)) {
        formCookie = newFormCookie();
        cookies.push(setCookie(names.form, formCookie, cookieOptions(config, FORM_COOKIE_SECONDS)));
      }
      token = formToken(await ops.people.formKey(), formCookie);
    }
    const flashCookie = request.cookies[names.flash];
    const flash = flashCookie ? openFlash(person ? person.record.csrfSecret : await ops.people.formKey(), flashCookie) : undefined;
    const context: PageContext = {
      request,
      deps,
      person,
      // A flash that does not open (another session's, forged, expired key) is simply dropped.
      flash: flashCookie ? (flash ?? {}) : undefined,
      caller: person ? personCaller(person.account, person.sessionHash) : { kind: 'anonymous' },
      network: clientNetwork(request, config.deploy.trustProxy),
      formToken: token,
      cookies,
    };

    let response: AppResponse;
    try {
      if (found.kind === 'method_not_allowed') {
        response = {
          ...messagePage(context, 405, 'Not allowed here', 'This address does not take that kind of request.'),
          headers: { Allow: found.allowed.join(', ') },
        };
      } else if (found.kind === 'bad_encoding') {
        response = messagePage(context, 400, 'That address does not work', 'Part of this address is not valid percent-encoding.', {
          href: '/',
          label: 'Go to your sites',
        });
      } else if (!route) {
        response = messagePage(context, 404, 'Page not found', 'There is no page at this address.', { href: '/', label: 'Go to your sites' });
      } else if (route.method === 'POST' && route.form !== false && isCrossSite(request.headers.origin, request.headers.referer, appOrigin)) {
        log.info({ path: loggedPath(request.path), origin: request.headers.origin }, 'app.cross_site_refused');
        response = messagePage(context, 403, 'Request refused', 'This form was sent from another site, so nothing was changed.', {
          href: '/',
          label: 'Go to your sites',
        });
      } else if (route.method === 'POST' && route.form !== false && !route.upload && !tokensMatch(token, formOf(request).get('csrf'))) {
        response = messagePage(context, 403, 'This form has expired', 'Nothing was changed. Go back, reload the page and try again.', {
          href: request.path,
          label: 'Reload the page',
        });
      } else {
        response = await route.handle(context);
      }
    } catch (err) {
      response = errorPage(context, err);
    }
    // Handlers' own headers win (the consent page widens form-action; JSON endpoints set theirs).
    response.headers = { ...pageHeaders(), ...response.headers };
    response.cookies.unshift(...cookies);
    return response;
  }

  return {
    handle(res, req) {
      const copied = copyRequest(res, req);
      trackAbort(res);
      const found = router.match(copied.method, copied.path);
      const uploading = copied.method === 'POST' && found.kind === 'found' && found.handler.upload === true;
      // An upload arrives through the deploy intake (memory or a spool file); a form is small.
      const upload: Upload | undefined = uploading ? startUpload(res, copied, uploads) : undefined;
      const body = copied.method === 'POST' && !uploading ? receiveBody(res, { limit: formLimit, declaredBytes: declaredLength(copied.headers) }) : undefined;
      void (async () => {
        let response: AppResponse;
        try {
          if (body?.refused) throw body.refused;
          const params = found.kind === 'found' ? found.params : [];
          const request: AppRequest = { ...copied, cookies: cookiesOf(copied), params, body: body ? (await body.done).data! : Buffer.alloc(0), upload };
          response = await respond(request, found);
        } catch (err) {
          // Only reading the body fails here (too large or too slow, or the client went); pages handle the rest.
          const { status, body: error, headers, internal } = toErrorBody(err);
          if (internal) log.error({ err, path: loggedPath(copied.path) }, 'app.failed');
          response = { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...pageHeaders(), ...headers }, cookies: [], body: error.error.message };
        }
        // A refusal may come before the whole body arrived: read on a little first.
        let finished = true;
        if (upload) {
          finished = await drainUpload(upload);
          discardUpload(upload);
        } else if (body) {
          finished = await body.drain();
          body.discard();
        }
        // Past that, a body declared within the limit is still not a reason to close: uWS reads the
        // rest of a declared body and drops it, so the connection stays in step, while closing on a
        // client that is still sending resets it, and the reset can destroy the answer before the
        // browser reads it. Only a body of unknown length, or one declared over the limit, is cut off.
        const declared = declaredLength(copied.headers);
        const inStep = finished || (declared !== undefined && declared <= (upload ? uploads.limit.maxBytes : formLimit.maxBytes));
        writeAppResponse(res, response, { head: copied.method === 'HEAD', closeConnection: !inStep });
      })();
    },
  };
}
