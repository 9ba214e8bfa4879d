import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ServeConfig } from '../config.js';
import {
  clientAddress,
  collectBody,
  forwardedFor,
  isAborted,
  networkOf,
  trackAbort,
  writeResponse,
  type Headers,
  type HttpRequest,
  type HttpResponse,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { ACCESS_COOKIE_LIFETIME_MS, ACCESS_PATHS, parsePreviewLabel, previewLinkExpiry, safeReturnPath } from '../rules/index.js';
import { hashToken, verifyPassword, type SiteAccessRecord, type SiteRecord, type Store } from '../store/index.js';
import { accessPage, type AccessPageOptions } from './access-pages.js';

/**
 * The gate of protected sites (issue 23). Public sites never get here: serving checks one field
 * (`site.access`) and goes on. A visitor of a protected site gets in with, in order:
 *
 * - a cookie this site host set (signed with the server secret, bound to the host label, the site
 *   and the time its access rule was set, so setting it again signs everyone out; a member's cookie
 *   also names the account, which must still be a member);
 * - an API token of a member as `Authorization: Bearer pl_…` (agents checking their own work);
 * - password mode: the password as HTTP Basic auth (any user name), or through the sign-in form;
 * - members mode: a single-use ticket from the app (`/.plinth/ticket`), which sets the cookie;
 * - a preview of a public site that keeps previews to members (`accessOfHost`): also a preview
 *   link (`/.plinth/share?token=…`), which sets a cookie of that preview's host alone.
 *
 * Anything else gets a 401 page that names the kind of access and nothing of the site's content.
 * Every answer behind the gate is `private, no-store` and `noindex`.
 */

export type AccessStore = Pick<Store, 'findToken' | 'getRole' | 'takeRateTokens' | 'useAccessTicket' | 'getRevisionByNumber'>;

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
  /** The site host's own address for a host label (`<name>` or `<number>--<name>`). */
  hostUrl: (label: string) => string;
  log: Logger;
  now: () => number;
}

/** The part of a request the gate reads before deciding (`forEach` for every X-Forwarded-For line). */
export type GateRequest = Pick<HttpRequest, 'getMethod' | 'getUrl' | 'getQuery' | 'getHeader' | 'forEach'>;

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

/** The headers of every answer behind the gate. */
export const PROTECTED_HEADERS: Headers = { 'Cache-Control': 'private, no-store', 'X-Robots-Tag': 'noindex' };

const COOKIE_LIFETIME_MS = ACCESS_COOKIE_LIFETIME_MS;
const MAX_FORM_BYTES = 4096;
const PASSWORD_WINDOW_MS = 3600_000;
/** Passwords that checked out lately, so HTTP Basic on every request costs no scrypt run. */
const KNOWN_GOOD_MAX = 1000;

export function createAccessGate(options: AccessGateOptions): AccessGate {
  const { store, config, log, now, secret } = options;
  const cookieName = config.access.secureCookies ? '__Host-plinth_access' : 'plinth_access';
  const knownGood = new Set<string>();

  const sign = (payload: string): string => createHmac('sha256', secret).update(payload).digest('base64url');
  const payloadOf = (label: string, site: SiteRecord, account: string, expires: number): string =>
    `v1|${label}|${site.id}|${site.access!.mode}|${site.access!.since}|${account}|${expires}`;

  /** `until`: a preview link's cookie lasts no longer than the link. */
  const makeCookie = (label: string, site: SiteRecord, account: string, until = Infinity): string => {
    const at = now();
    const expires = Math.min(until, at + COOKIE_LIFETIME_MS);
    const value = `${account}.${expires}.${sign(payloadOf(label, site, account, expires))}`;
    return `${cookieName}=${value}; Path=/; Max-Age=${Math.floor((expires - at) / 1000)}; HttpOnly; SameSite=Lax${config.access.secureCookies ? '; Secure' : ''}`;
  };

  /** Whether the request's cookie was made by this host for this site under its current rule. */
  const cookieAdmits = (cookieHeader: string, label: string, site: SiteRecord): boolean => {
    const value = readCookie(cookieHeader, cookieName);
    if (value === undefined) return false;
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

  /**
   * Checks a password: known good ones at once; any other counts against the network's tries
   * first, so a right guess after the cap is refused like a wrong one.
   */
  const checkPassword = async (site: SiteRecord, password: string, net: string): Promise<'ok' | 'wrong' | { retryAfterMs: number }> => {
    const key = createHash('sha256').update(`${site.id}\u0000${site.access!.since}\u0000${password}`).digest('base64url');
    if (knownGood.has(key)) return 'ok';
    const limit = config.access.passwordTriesPerHour;
    if (limit > 0) {
      const taken = await store.takeRateTokens([{ scope: `site-password:${net}`, limit, windowMs: PASSWORD_WINDOW_MS }]);
      if (!taken.allowed) return { retryAfterMs: taken.retryAfterMs };
    }
    const hash = site.access!.passwordHash;
    if (hash === undefined || !(await verifyPassword(password, hash))) return 'wrong';
    if (knownGood.size >= KNOWN_GOOD_MAX) knownGood.clear();
    knownGood.add(key);
    return 'ok';
  };

  const page = (res: HttpResponse, status: number, head: boolean, pageOptions: AccessPageOptions, extra: Headers = {}, cookies?: string[]): void => {
    const body = status === 303 ? '' : accessPage(pageOptions);
    const headers: Headers = {
      'Content-Type': 'text/html; charset=utf-8',
      ...PROTECTED_HEADERS,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      ...extra,
    };
    writeResponse(res, status, headers, body, { head, ...(cookies ? { cookies } : {}) });
  };

  /** Where the members-only hop starts: the app, which sends the visitor back with a ticket. */
  const appHop = (site: SiteRecord, label: string, back: string): string => {
    const query = new URLSearchParams({ site: site.name });
    const dashes = label.indexOf('--');
    if (dashes > 0) query.set('preview', label.slice(0, dashes));
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
      {
        ...(mode === 'members' ? { 'WWW-Authenticate': 'Bearer' } : {}),
      },
    );
  };

  const redeemTicket = (res: HttpResponse, req: GateRequest, site: SiteRecord, label: string, head: boolean): void => {
    const query = new URLSearchParams(req.getQuery() ?? '');
    const ticket = query.get('ticket') ?? '';
    const back = safeReturnPath(query.get('return'));
    if (site.access!.mode !== 'members' || !/^tk_[A-Za-z0-9_-]{20,64}$/.test(ticket)) return refuse(res, req, site, label, head, 'ticket');
    trackAbort(res);
    store.useAccessTicket(hashToken(ticket)).then(
      (found) => {
        if (isAborted(res)) return;
        res.cork(() => {
          // A ticket names its site and host: one made for another site or address is refused.
          if (found === undefined || found.siteId !== site.id || found.host !== label || store.getRole(site.id, found.accountId) === undefined) {
            return page(res, 401, head, { mode: 'members', siteName: site.name, returnPath: back, signInUrl: appHop(site, label, back), problem: 'ticket' });
          }
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

  return {
    admit(res, req, site, label, proceed) {
      const head = req.getMethod() === 'head';
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
      const refusedCopy = copyGateRequest(req);
      trackAbort(res);
      checkPassword(site, password, net).then(
        (outcome) => {
          if (isAborted(res)) return;
          res.cork(() => {
            if (outcome === 'ok') return proceed(refusedCopy);
            if (outcome === 'wrong') return refuse(res, refusedCopy, site, label, head, 'wrong_password');
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
      const copy = copyGateRequest(req);
      const origin = req.getHeader('origin');
      const net = network(res, req);
      trackAbort(res);
      const body = collectBody(res, MAX_FORM_BYTES, () => new Error('form too large'));
      void (async () => {
        let form: URLSearchParams;
        try {
          form = new URLSearchParams((await body.done).toString('utf8'));
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
        const outcome = await checkPassword(site, form.get('password') ?? '', net);
        if (isAborted(res)) return;
        res.cork(() => {
          if (outcome === 'ok')
            return page(res, 303, false, { mode: 'password', siteName: site.name, returnPath: back }, { Location: back }, [makeCookie(label, site, '-')]);
          if (outcome === 'wrong') {
            return page(res, 401, false, { mode: 'password', siteName: site.name, returnPath: back, problem: 'wrong_password' });
          }
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

/** One cookie's value from a Cookie header; the first of that name wins. */
function readCookie(header: string, name: string): string | undefined {
  if (header === '') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function copyGateRequest(req: GateRequest): GateRequest {
  const method = req.getMethod();
  const url = req.getUrl();
  const query = req.getQuery();
  const headers: Record<string, string> = {};
  for (const name of ['accept-encoding', 'if-none-match', 'range', 'cookie', 'authorization']) headers[name] = req.getHeader(name);
  // Every X-Forwarded-For line, as one: getHeader gives only the first.
  headers['x-forwarded-for'] = forwardedFor(req);
  return {
    getMethod: () => method,
    getUrl: () => url,
    getQuery: () => query,
    getHeader: (name) => headers[String(name)] ?? '',
    forEach: (each) => {
      for (const [name, value] of Object.entries(headers)) if (value !== '') each(name, value);
    },
  };
}
