import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ServeConfig } from '../config.js';
import {
  clientAddress,
  cookieName,
  cookieValues,
  copyServedRequest,
  forwardedFor,
  isAborted,
  networkOf,
  receiveBody,
  securityHeaders,
  setCookie,
  trackAbort,
  writeResponse,
  type Headers,
  type HttpResponse,
  type ServedRequest,
  type BodyLimit,
} from '../http/index.js';
import type { Logger } from '../log.js';
import {
  ACCESS_COOKIE_LIFETIME_MS,
  ACCESS_PATHS,
  mayReachProtected,
  parsePreviewLabel,
  previewLinkExpiry,
  safeReturnPath,
  wantsBasicChallenge,
} from '../rules/index.js';
import { hashToken, type AccessTicketRecord, type SiteAccessRecord, type SiteRecord, type Store } from '../store/index.js';
import { accessPage, type AccessPageOptions } from './access-pages.js';
import { ANSWER_HEADERS } from './answer-headers.js';
import { protectedHeaders } from './headers.js';
import { createPasswordChecker } from './password-check.js';

/**
 * The gate of protected sites (issue 23). Public sites never get here: serving checks one field
 * (`site.access`) and goes on. A visitor of a protected site gets in with, in order:
 *
 * - a cookie this host set (signed with the server secret, bound to the host — its label, or the
 *   custom domain — the site and the time its access rule was set, so setting it again signs
 *   everyone out; a member's cookie also names the account, which must still be a member; any
 *   valid one among several of the same name will do);
 * - an API token of a member as `Authorization: Bearer pl_…` (agents checking their own work);
 * - password mode: the password as HTTP Basic auth (any user name), or through the sign-in form;
 * - members mode: a single-use ticket from the app (`/.plinth/ticket`), which sets the cookie;
 * - a preview of a public site that keeps previews to members (`accessOfHost`): also a preview
 *   link (`/.plinth/share?token=…`), which sets a cookie of that preview's host alone.
 *
 * Anything else gets a 401 page that names the kind of access and nothing of the site's content.
 * Loads from other origins other than top-level navigations (`<script>`, `<img>`, `fetch`, frames,
 * told by `Sec-Fetch-*`) get a 403 before any of this: browsers send the cookie along with them,
 * because every site host shares the site domain (see rules `mayReachProtected`).
 * Every answer of a protected site, the gate's own included, carries the privacy headers of
 * headers.ts `protectedHeaders`, whatever the site's `_headers` say.
 */

export type AccessStore = Pick<Store, 'findToken' | 'getRole' | 'takeRateTokens' | 'findAccessTicket' | 'useAccessTicket' | 'getRevisionByNumber' | 'cluster'>;

/**
 * The access rule a host of the site answers under: the site's own, or, for a preview of a public
 * site that keeps its previews to members, a members-only rule that preview links open too.
 * Undefined: public.
 */
export function accessOfHost(site: SiteRecord, preview: boolean): SiteAccessRecord | undefined {
  if (site.access !== undefined || !preview || site.previews === undefined) return site.access;
  return { mode: 'members', since: site.previews.since, previewLinks: true };
}

/** The account part of the cookie a preview link sets (account ids are `acct_…`). */
const LINK_HOLDER = 'link';

export interface AccessGateOptions {
  store: AccessStore;
  config: ServeConfig;
  /** Key the access cookies are signed with: the same on every thread and node. */
  secret: string;
  /** The address of a host label: `<name>` or `<number>--<name>` on the site domain, or a custom domain (it has dots). */
  hostUrl: (label: string) => string;
  log: Logger;
  now: () => number;
  /** Counter of password hashes running in this process, shared by its HTTP threads (password-check.ts). */
  hashSlots?: SharedArrayBuffer;
}

/** The part of a request the gate reads before deciding (`forEach` for every X-Forwarded-For line). */
export type GateRequest = ServedRequest;

/**
 * The headers read once the gate's handler returned (a password checked, a form read): those of
 * the answer it lets through (analytics' included), and its own for a refusal.
 */
const GATE_HEADERS = [...ANSWER_HEADERS, 'cookie', 'authorization', 'accept', 'sec-fetch-mode'] as const;

export interface AccessGate {
  /**
   * For a protected site: true when the request may be served now. Otherwise the gate has
   * answered, or will: once an asynchronous check (a password) lets it in, it calls `proceed`
   * inside a cork, unless the client left.
   */
  admit(res: HttpResponse, req: GateRequest, site: SiteRecord, label: string, proceed: (copy: GateRequest) => void): boolean;
  /** `POST /.plinth/login`: the password form. Reads the body; answers itself. */
  postLogin(res: HttpResponse, req: GateRequest, site: SiteRecord, label: string): void;
}

const COOKIE_LIFETIME_MS = ACCESS_COOKIE_LIFETIME_MS;
const MAX_FORM_BYTES = 4096;
/** The password form is small; a larger one is answered with the form again (413). */
const FORM_LIMIT: BodyLimit = {
  maxBytes: MAX_FORM_BYTES,
  deadlineMs: 0,
  tooLarge: () => new Error('form too large'),
  tooSlow: () => new Error('form too slow'),
};
/** Access cookies of one request that are checked (planted ones included); each costs an HMAC. */
const MAX_ACCESS_COOKIES = 16;
/** Seconds a visitor waits when too many passwords are being hashed at once. */
const HASHING_RETRY_AFTER_S = '1';

export function createAccessGate(options: AccessGateOptions): AccessGate {
  const { store, config, log, now, secret } = options;
  const secure = config.access.secureCookies;
  const accessCookie = cookieName('plinth_access', secure);
  const passwords = createPasswordChecker({ store, config: config.access, log, now, hashSlots: options.hashSlots });

  const sign = (payload: string): string => createHmac('sha256', secret).update(payload).digest('base64url');
  const payloadOf = (label: string, site: SiteRecord, account: string, expires: number): string =>
    `v1|${label}|${site.id}|${site.access!.mode}|${site.access!.since}|${account}|${expires}`;

  /** `until`: a preview link's cookie lasts no longer than the link. */
  const makeCookie = (label: string, site: SiteRecord, account: string, until = Infinity): string => {
    const at = now();
    const expires = Math.min(until, at + COOKIE_LIFETIME_MS);
    const value = `${account}.${expires}.${sign(payloadOf(label, site, account, expires))}`;
    return setCookie(accessCookie, value, { secure, maxAgeSeconds: (expires - at) / 1000 });
  };

  /**
   * Whether one of the request's access cookies was made by this host for this site under its
   * current rule. Any of them will do: on an http install another site host may plant cookies of
   * the same name for the whole site domain, or for a longer path, which browsers send first.
   */
  const cookieAdmits = (cookieHeader: string, label: string, site: SiteRecord): boolean =>
    cookieValues(cookieHeader, accessCookie, MAX_ACCESS_COOKIES).some((value) => cookieValueAdmits(value, label, site));

  const cookieValueAdmits = (value: string, label: string, site: SiteRecord): boolean => {
    const parts = value.split('.');
    if (parts.length !== 3) return false;
    const [account, expiresText, signature] = parts as [string, string, string];
    const expires = Number(expiresText);
    if (!/^\d{1,15}$/.test(expiresText) || expires <= now()) return false;
    const expected = Buffer.from(sign(payloadOf(label, site, account, expires)));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    if (account === LINK_HOLDER) return site.access!.previewLinks === true;
    if (site.access!.mode === 'members') return account !== '-' && store.getRole(site.id, account) !== undefined;
    return account === '-';
  };

  /** A member's API token as Bearer: in, any role. Anything else presented: not in. */
  const bearerAdmits = (token: string, site: SiteRecord): boolean => {
    if (!token.startsWith('pl_')) return false;
    const record = store.findToken(hashToken(token));
    return record?.kind === 'api' && store.getRole(site.id, record.accountId) !== undefined;
  };

  const network = (res: HttpResponse, req: GateRequest): string =>
    networkOf(clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor(req), config.access.trustProxy));

  const page = (res: HttpResponse, status: number, head: boolean, pageOptions: AccessPageOptions, extra: Headers = {}, cookies?: string[]): void => {
    const body = status === 303 ? '' : accessPage(pageOptions);
    const headers = protectedHeaders(Object.entries({ 'Content-Type': 'text/html; charset=utf-8', ...securityHeaders('gate'), ...extra }));
    writeResponse(res, status, Object.fromEntries(headers), body, { head, ...(cookies ? { cookies } : {}) });
  };

  /** Where the members-only hop starts: the app, which sends the visitor back with a ticket. */
  const appHop = (site: SiteRecord, label: string, back: string): string => {
    const query = new URLSearchParams({ site: site.name });
    const dashes = label.indexOf('--');
    // The app sends the visitor back to the host they came by, a custom domain too.
    if (label.includes('.')) query.set('domain', label);
    else if (dashes > 0) query.set('preview', label.slice(0, dashes));
    query.set('return', back);
    return `${config.appUrl}/site-access?${query.toString()}`;
  };

  const refuse = (res: HttpResponse, req: GateRequest, site: SiteRecord, label: string, head: boolean, problem?: AccessPageOptions['problem']): void => {
    // The sign-in form and a preview link name where to go back to; a link's token never goes along.
    const ownReturn = req.getUrl() === ACCESS_PATHS.login || req.getUrl() === ACCESS_PATHS.share;
    const back = safeReturnPath(ownReturn ? new URLSearchParams(req.getQuery() ?? '').get('return') : pathWithQuery(req));
    const mode = site.access!.mode;
    page(
      res,
      401,
      head,
      {
        mode,
        siteName: site.name,
        returnPath: back,
        signInUrl: mode === 'members' ? appHop(site, label, back) : undefined,
        problem,
        ...(site.access!.previewLinks ? { keptPreview: true } : {}),
      },
      mode === 'members'
        ? { 'WWW-Authenticate': 'Bearer' }
        : wantsBasicChallenge(req.getHeader('sec-fetch-mode'), req.getHeader('accept'))
          ? { 'WWW-Authenticate': `Basic realm="${site.name}", charset="UTF-8"` }
          : {},
    );
  };

  const redeemTicket = (res: HttpResponse, req: GateRequest, site: SiteRecord, label: string, head: boolean): void => {
    const query = new URLSearchParams(req.getQuery() ?? '');
    const ticket = query.get('ticket') ?? '';
    const back = safeReturnPath(query.get('return'));
    if (site.access!.mode !== 'members' || !/^tk_[A-Za-z0-9_-]{20,64}$/.test(ticket)) return refuse(res, req, site, label, head, 'ticket');
    const hash = hashToken(ticket);
    const refused = (): void =>
      page(res, 401, head, { mode: 'members', siteName: site.name, returnPath: back, signInUrl: appHop(site, label, back), problem: 'ticket' });
    // A ticket names its site and host: one made for another site or address is refused.
    const fits = (found: AccessTicketRecord): boolean =>
      found.siteId === site.id && found.host === label && found.expiresAt > now() && store.getRole(site.id, found.accountId) !== undefined;
    // Read-only first: a made-up ticket, or one for another address, costs no write transaction
    // (in a cluster, the cluster-wide write lock), and is not used up by being shown elsewhere.
    const seen = store.findAccessTicket(hash);
    if (seen !== undefined ? !fits(seen) : store.cluster === undefined) return refused();
    trackAbort(res);
    (async () => {
      // Made on another node moments ago: this node's replica may not have it yet.
      if (seen === undefined) {
        await store.cluster!.catchUp();
        const caught = store.findAccessTicket(hash);
        if (caught === undefined || !fits(caught)) return undefined;
      }
      const used = await store.useAccessTicket(hash);
      return used !== undefined && fits(used) ? used : undefined;
    })().then(
      (found) => {
        if (isAborted(res)) return;
        res.cork(() => {
          if (found === undefined) return refused();
          page(res, 303, head, { mode: 'members', siteName: site.name, returnPath: back }, { Location: back }, [makeCookie(label, site, found.accountId)]);
        });
      },
      (err: unknown) => {
        log.error({ err, site: site.name }, 'serve.ticket_failed');
        if (!isAborted(res)) res.cork(() => page(res, 503, head, { mode: 'members', siteName: site.name, returnPath: back, problem: 'unavailable' }));
      },
    );
  };

  /**
   * A preview link (rules/preview-links.ts): a valid token for this very preview sets a cookie of
   * this host that lasts as long as the link, and leads to the clean address, so the token leaves
   * the address bar (and every Referer) at once. It is never logged.
   */
  const redeemShare = (res: HttpResponse, req: GateRequest, site: SiteRecord, label: string, head: boolean): void => {
    const query = new URLSearchParams(req.getQuery() ?? '');
    const back = safeReturnPath(query.get('return'));
    const preview = site.access!.previewLinks ? parsePreviewLabel(label) : undefined;
    const revision = preview === undefined ? undefined : store.getRevisionByNumber(site.id, preview.number);
    const until =
      revision === undefined || revision.deletedAt !== undefined
        ? undefined
        : previewLinkExpiry(secret, query.get('token') ?? '', { label, siteId: site.id, revisionId: revision.id, since: site.access!.since }, now());
    if (until === undefined) {
      // A member (or an earlier link) already in: on to the preview, whatever became of this link.
      if (cookieAdmits(req.getHeader('cookie'), label, site))
        return page(res, 303, head, { mode: 'members', siteName: site.name, returnPath: back }, { Location: back });
      return refuse(res, req, site, label, head, 'link');
    }
    page(res, 303, head, { mode: 'members', siteName: site.name, returnPath: back }, { Location: back }, [makeCookie(label, site, LINK_HOLDER, until)]);
  };

  const tooMany = (res: HttpResponse, head: boolean, site: SiteRecord, back: string, retryAfterMs: number): void =>
    page(
      res,
      429,
      head,
      { mode: 'password', siteName: site.name, returnPath: back, problem: 'too_many' },
      { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    );

  const hashingBusy = (res: HttpResponse, head: boolean, site: SiteRecord, back: string): void =>
    page(res, 503, head, { mode: 'password', siteName: site.name, returnPath: back, problem: 'unavailable' }, { 'Retry-After': HASHING_RETRY_AFTER_S });

  return {
    admit(res, req, site, label, proceed) {
      const head = req.getMethod() === 'head';
      // Before any credential is looked at, so the answer is the same signed in or not.
      const fetch = { site: req.getHeader('sec-fetch-site'), mode: req.getHeader('sec-fetch-mode'), dest: req.getHeader('sec-fetch-dest') };
      if (!mayReachProtected(fetch))
        return answered(page(res, 403, head, { mode: site.access!.mode, siteName: site.name, returnPath: '/', problem: 'elsewhere' }));
      const url = req.getUrl();
      if (url === ACCESS_PATHS.ticket) return answered(redeemTicket(res, req, site, label, head));
      if (url === ACCESS_PATHS.share) return answered(redeemShare(res, req, site, label, head));
      if (url === ACCESS_PATHS.login) {
        if (site.access!.mode === 'members') {
          const back = safeReturnPath(new URLSearchParams(req.getQuery() ?? '').get('return'));
          return answered(page(res, 303, head, { mode: 'members', siteName: site.name, returnPath: back }, { Location: appHop(site, label, back) }));
        }
        return answered(refuse(res, req, site, label, head));
      }
      if (cookieAdmits(req.getHeader('cookie'), label, site)) return true;
      const authorization = req.getHeader('authorization');
      if (authorization === '') return answered(refuse(res, req, site, label, head));
      const space = authorization.indexOf(' ');
      const scheme = authorization.slice(0, space).toLowerCase();
      const credential = authorization.slice(space + 1).trim();
      if (scheme === 'bearer') return bearerAdmits(credential, site) || answered(refuse(res, req, site, label, head, 'credential'));
      if (scheme !== 'basic' || site.access!.mode !== 'password') return answered(refuse(res, req, site, label, head, 'credential'));
      const decoded = Buffer.from(credential, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon === -1) return answered(refuse(res, req, site, label, head, 'credential'));
      const password = decoded.slice(colon + 1);
      const net = network(res, req);
      const refusedCopy = copyServedRequest(req, GATE_HEADERS);
      trackAbort(res);
      passwords.check(site, password, net).then(
        (outcome) => {
          if (isAborted(res)) return;
          res.cork(() => {
            if (outcome === 'ok') return proceed(refusedCopy);
            if (outcome === 'wrong') return refuse(res, refusedCopy, site, label, head, 'wrong_password');
            if (outcome === 'busy') return hashingBusy(res, head, site, safeReturnPath(pathWithQuery(refusedCopy)));
            tooMany(res, head, site, safeReturnPath(pathWithQuery(refusedCopy)), outcome.retryAfterMs);
          });
        },
        (err: unknown) => {
          log.error({ err, site: site.name }, 'serve.password_check_failed');
          if (!isAborted(res)) res.cork(() => page(res, 503, head, { mode: 'password', siteName: site.name, returnPath: '/', problem: 'unavailable' }));
        },
      );
      return false;
    },

    postLogin(res, req, site, label) {
      const copy = copyServedRequest(req, GATE_HEADERS);
      const origin = req.getHeader('origin');
      const net = network(res, req);
      trackAbort(res);
      const body = receiveBody(res, { limit: FORM_LIMIT });
      void (async () => {
        let form: URLSearchParams;
        try {
          form = new URLSearchParams((await body.done).data!.toString('utf8'));
        } catch {
          if (!isAborted(res)) res.cork(() => page(res, 413, false, { mode: 'password', siteName: site.name, returnPath: '/', problem: 'credential' }, {}));
          return;
        }
        const back = safeReturnPath(form.get('return'));
        // The form posts to its own host: a page elsewhere must not sign a visitor in (or count tries).
        if (origin !== '' && origin !== new URL(options.hostUrl(label)).origin) {
          if (!isAborted(res)) res.cork(() => page(res, 403, false, { mode: 'password', siteName: site.name, returnPath: back, problem: 'credential' }));
          return;
        }
        if (site.access?.mode !== 'password') {
          if (!isAborted(res)) res.cork(() => refuse(res, copy, site, label, false));
          return;
        }
        const outcome = await passwords.check(site, form.get('password') ?? '', net);
        if (isAborted(res)) return;
        res.cork(() => {
          if (outcome === 'ok')
            return page(res, 303, false, { mode: 'password', siteName: site.name, returnPath: back }, { Location: back }, [makeCookie(label, site, '-')]);
          if (outcome === 'wrong') {
            return page(res, 401, false, { mode: 'password', siteName: site.name, returnPath: back, problem: 'wrong_password' });
          }
          if (outcome === 'busy') return hashingBusy(res, false, site, back);
          tooMany(res, false, site, back, outcome.retryAfterMs);
        });
      })().catch((err: unknown) => {
        log.error({ err, site: site.name }, 'serve.login_failed');
        if (!isAborted(res)) res.cork(() => page(res, 503, false, { mode: 'password', siteName: site.name, returnPath: '/', problem: 'unavailable' }));
      });
    },
  };
}

/** For `return answered(send(…))`: the request was answered, not admitted. */
function answered(_sent: void): false {
  return false;
}

function pathWithQuery(req: GateRequest): string {
  const query = req.getQuery();
  return query ? `${req.getUrl()}?${query}` : req.getUrl();
}
