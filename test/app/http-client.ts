import { parse as parseCookie } from 'cookie';
import type { BrowserContext } from 'playwright-core';
import { request, type TestResponse } from '../helpers/http.js';
import { linkIn, mailTo, countMailTo, type AppServer } from './browser.js';

/**
 * A cookie-keeping client for the app host over plain HTTP: what a browser does, without one, for
 * tests of the security rules. POSTs send the app's own Origin unless told otherwise.
 */
export class AppClient {
  readonly cookies = new Map<string, string>();
  /** Every `Set-Cookie` line this client was sent, in order. */
  readonly setCookieLines: string[] = [];

  constructor(readonly server: AppServer) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<TestResponse> {
    return this.send('GET', path, undefined, headers);
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<TestResponse> {
    return this.send('POST', path, new URLSearchParams(fields).toString(), {
      origin: this.server.appUrl,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    });
  }

  /** A POST with a body as it is (the drop script's archive upload). */
  async postRaw(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<TestResponse> {
    return this.send('POST', path, body, { origin: this.server.appUrl, ...headers });
  }

  /** A `multipart/form-data` POST, as a browser sends a form with a file input. */
  async postMultipart(
    path: string,
    fields: Record<string, string>,
    file?: { field: string; filename: string; content: Buffer },
    headers: Record<string, string> = {},
  ): Promise<TestResponse> {
    const boundary = `----plinthtest${Date.now().toString(16)}`;
    const parts: Buffer[] = [];
    for (const [name, value] of Object.entries(fields)) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    }
    if (file) {
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        file.content,
        Buffer.from('\r\n'),
      );
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    return this.send('POST', path, Buffer.concat(parts), {
      origin: this.server.appUrl,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      ...headers,
    });
  }

  /** The form token of the page at `path` (every form on a page carries the same one). */
  async formToken(path: string): Promise<string> {
    const page = await this.get(path);
    const match = /name="csrf" value="([^"]+)"/.exec(page.text);
    if (!match) throw new Error(`no form token on ${path}: ${page.status} ${page.text.slice(0, 200)}`);
    return match[1]!;
  }

  /**
   * Asks for a sign-in e-mail from this browser; returns what the mailbox receives (the link's
   * token and the code). The browser keeps only its own sign-in cookie.
   */
  async startSignIn(email: string, fields: Record<string, string> = {}): Promise<{ token: string; code: string }> {
    const before = countMailTo(this.server, email);
    const started = await this.post('/login', { email, ...fields, csrf: await this.formToken('/login') });
    if (started.status !== 303) throw new Error(`sign-in refused: ${started.status} ${started.text.slice(0, 300)}`);
    const mail = await mailTo(this.server, email, { after: before });
    const token = new URL(linkIn(mail, `${this.server.appUrl}/login/verify?token=`)).searchParams.get('token')!;
    const code = /code on the sign-in page: (\d{6})/.exec(mail.text ?? '')![1]!;
    return { token, code };
  }

  /** Signs in through the e-mailed link; returns the session cookie's value. */
  async signIn(email: string): Promise<string> {
    const { token } = await this.startSignIn(email);
    const done = await this.post('/login/verify', { token, csrf: await this.formToken(`/login/verify?token=${token}`) });
    if (done.status !== 303) throw new Error(`sign-in failed: ${done.status}`);
    return this.session()!;
  }

  /** The session cookie's value (plain or `__Host-` name). */
  session(): string | undefined {
    return this.cookies.get('plinth_session') ?? this.cookies.get('__Host-plinth_session');
  }

  /** The browser's pending sign-in cookie (plain or `__Host-` name). */
  signInCookie(): string | undefined {
    return this.cookies.get('plinth_signin') ?? this.cookies.get('__Host-plinth_signin');
  }

  private async send(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string>): Promise<TestResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await request({
      port: this.server.port,
      host: new URL(this.server.appUrl).host,
      method,
      path,
      body,
      headers: { ...(cookie ? { cookie } : {}), ...headers },
    });
    for (const line of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
      this.setCookieLines.push(line);
      const [pair] = line.split(';');
      const parsed = parseCookie(pair!);
      for (const [name, value] of Object.entries(parsed)) {
        const expired = /max-age=0/i.test(line);
        if (expired || value === '') this.cookies.delete(name);
        else if (value !== undefined) this.cookies.set(name, value);
      }
    }
    return res;
  }
}

/**
 * Signs a person in for a browser context without walking the sign-in pages: the e-mailed link is
 * followed over plain HTTP (AppClient.signIn), and the context gets the session cookie as the
 * server set it (the same attributes, so SameSite rules apply as after a sign-in in the browser).
 * For flows about something else; Chromium walks the sign-in pages in the flows about signing in
 * (signIn in ./browser.ts), where the pages are what is checked.
 */
export async function signInOverHttp(context: BrowserContext, server: AppServer, email: string): Promise<void> {
  const client = new AppClient(server);
  const session = await client.signIn(email);
  const line = client.setCookieLines.findLast((set) => set.includes(`plinth_session=${session}`));
  if (!line) throw new Error(`no session cookie for ${email}`);
  await context.addCookies([browserCookie(line, server.appUrl)]);
}

type BrowserCookie = Parameters<BrowserContext['addCookies']>[0][number];

/** A `Set-Cookie` line from `url` as Playwright adds it to a context: a host-only cookie with its attributes. */
function browserCookie(line: string, url: string): BrowserCookie {
  const [pair, ...attributes] = line.split(';').map((part) => part.trim());
  const eq = pair!.indexOf('=');
  const cookie: BrowserCookie = { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), domain: new URL(url).hostname, path: '/' };
  for (const attribute of attributes) {
    const [key, value = ''] = attribute.split('=');
    switch (key!.toLowerCase()) {
      case 'path':
        cookie.path = value;
        break;
      case 'httponly':
        cookie.httpOnly = true;
        break;
      case 'secure':
        cookie.secure = true;
        break;
      case 'samesite':
        cookie.sameSite = (value[0]!.toUpperCase() + value.slice(1).toLowerCase()) as BrowserCookie['sameSite'];
        break;
      case 'max-age':
        cookie.expires = Math.floor(Date.now() / 1000) + Number(value);
        break;
    }
  }
  return cookie;
}
