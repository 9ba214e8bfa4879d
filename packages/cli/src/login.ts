import { hostname } from 'node:os';
import { callApi, type ApiAnswer } from './api-client.js';
import { credentialsPath, deleteCredentials, writeCredentials, type Credentials } from './credentials.js';
import { reportFailure, type CommandIo } from './output.js';
import { UsageError } from './usage.js';

/**
 * `plinth login`: the OAuth 2.0 device authorization grant (RFC 8628) against the account app.
 * The command asks for a code, the person opens the address it prints, signs in and approves
 * (the app shows which device asks and what it may do), and the command, polling meanwhile,
 * receives an API token of the account, which it keeps in the user's config folder.
 * `plinth logout` revokes that token (RFC 7009) and forgets it; `plinth whoami` shows the account.
 */

/** The client id the service knows the command by (a public client: no secret). */
export const CLIENT_ID = 'plinth-cli';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 3.2: the interval when the server names none; 3.5: what `slow_down` adds. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_S = 5;

export interface LoginOptions extends CommandIo {
  apiUrl: string;
  /** The account app; by default the API's address with `app.` for `api.`. */
  appUrl?: string;
  configDir: string;
  credentials?: Credentials;
}

interface Metadata {
  device_authorization_endpoint?: string;
  token_endpoint?: string;
  revocation_endpoint?: string;
}

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

/** The app's address for an API address: `api.example.org` → `app.example.org`, port and scheme kept. */
export function appUrlFor(apiUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return undefined;
  }
  if (!url.hostname.startsWith('api.')) return undefined;
  url.hostname = `app.${url.hostname.slice(4)}`;
  return url.origin;
}

function appOf(options: LoginOptions): string {
  const app = options.appUrl ?? appUrlFor(options.apiUrl);
  if (!app) throw new UsageError(`cannot tell the account app's address from the API's (${options.apiUrl}): pass it with --app URL`);
  return app.replace(/\/+$/, '');
}

/** The server's RFC 8414 metadata; the endpoints used must be the app's own (a token goes to them). */
async function metadataOf(appUrl: string): Promise<{ metadata: Metadata } | { failure: ApiAnswer }> {
  const answer = await callApi({ apiUrl: appUrl, method: 'GET', path: '.well-known/oauth-authorization-server' });
  if (answer.status !== 200 || !answer.json) return { failure: answer };
  const metadata = answer.json as Metadata;
  const origin = new URL(appUrl).origin;
  for (const field of ['device_authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const) {
    const value = metadata[field];
    if (value === undefined) continue;
    let endpoint: URL | undefined;
    try {
      endpoint = new URL(value);
    } catch {
      endpoint = undefined;
    }
    if (endpoint?.origin !== origin)
      throw new Error(`the sign-in metadata of ${appUrl} names ${field} ${JSON.stringify(value)}, which is not on ${origin}; not using it`);
  }
  return { metadata };
}

const form = (fields: Record<string, string>): { headers: Record<string, string>; body: Buffer } => ({
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: Buffer.from(new URLSearchParams(fields).toString()),
});

/** An OAuth error answer (`{error, error_description}`, RFC 6749 5.2) as one line. */
function oauthFailure(io: CommandIo, what: string, answer: ApiAnswer): number {
  const body = answer.json as Record<string, unknown> | undefined;
  if (typeof body?.error !== 'string') return reportFailure(io, what, answer);
  const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
  if (io.json) io.out(JSON.stringify(body, null, 2));
  else io.err(`${what} failed (${answer.status} ${body.error})${description}`);
  return 1;
}

/** The `error` of an OAuth answer, if it is one. */
const oauthError = (answer: ApiAnswer): string | undefined => {
  const error = (answer.json as Record<string, unknown> | undefined)?.error;
  return typeof error === 'string' ? error : undefined;
};

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function loginCommand(options: LoginOptions): Promise<number> {
  const appUrl = appOf(options);
  const found = await metadataOf(appUrl);
  if ('failure' in found) return reportFailure(options, `Reading the sign-in metadata of ${appUrl}`, found.failure);
  const { metadata } = found;
  if (!metadata.device_authorization_endpoint || !metadata.token_endpoint) {
    options.err(
      `${appUrl} does not offer sign-in from a device (its metadata names no device_authorization_endpoint). ` +
        `Create an API token on the app's API tokens page instead, and pass it with --token or PLINTH_TOKEN.`,
    );
    return 1;
  }
  const deviceName = `plinth CLI on ${hostname()}`.slice(0, 80);
  const asked = await callApi({
    apiUrl: appUrl,
    method: 'POST',
    path: metadata.device_authorization_endpoint,
    ...form({ client_id: CLIENT_ID, device_name: deviceName }),
  });
  const grant = asked.json as unknown as DeviceAuthorization | undefined;
  if (asked.status !== 200 || typeof grant?.device_code !== 'string' || typeof grant.user_code !== 'string') {
    return oauthFailure(options, 'Asking for a sign-in code', asked);
  }
  // Where the person goes: the address with the code in it if the server gives one (RFC 8628 3.3.1).
  if (grant.verification_uri_complete) {
    options.err(`To sign in, open ${grant.verification_uri_complete}`);
    options.err(`and check that it shows the code ${grant.user_code} before you approve.`);
  } else {
    options.err(`To sign in, open ${grant.verification_uri} and enter the code ${grant.user_code}.`);
  }
  options.status?.('Waiting for the approval in the browser…');

  let intervalS = Number.isFinite(grant.interval) && grant.interval! > 0 ? grant.interval! : DEFAULT_INTERVAL_S;
  const deadline = Date.now() + (Number.isFinite(grant.expires_in) && grant.expires_in > 0 ? grant.expires_in : 900) * 1000;
  for (;;) {
    await wait(intervalS * 1000);
    const polled = await callApi({
      apiUrl: appUrl,
      method: 'POST',
      path: metadata.token_endpoint,
      ...form({ grant_type: DEVICE_GRANT, device_code: grant.device_code, client_id: CLIENT_ID }),
    });
    const token = polled.json?.access_token;
    if (polled.status === 200 && typeof token === 'string') {
      options.status?.(undefined);
      const credentials: Credentials = { api_url: options.apiUrl, app_url: appUrl, token, device_name: deviceName, created_at: new Date().toISOString() };
      const path = await writeCredentials(options.configDir, credentials);
      // A login over an earlier one: the token it replaces is revoked, not left working unseen.
      if (options.credentials && options.credentials.token !== token) await revoke(options.credentials).catch(() => undefined);
      return signedIn(options, credentials, path);
    }
    const error = oauthError(polled);
    if (error === 'authorization_pending' && Date.now() < deadline) continue;
    if (error === 'slow_down' && Date.now() < deadline) {
      intervalS += SLOW_DOWN_S;
      continue;
    }
    options.status?.(undefined);
    if (error === 'access_denied') {
      options.err('The sign-in was denied in the browser; no token was issued, and nothing was saved.');
      return 1;
    }
    if (error === 'expired_token' || error === 'authorization_pending' || error === 'slow_down') {
      options.err('The code expired before it was approved; nothing was saved. Run plinth login again for a new one.');
      return 1;
    }
    return oauthFailure(options, 'Signing in', polled);
  }
}

/** After a login: who it is, where the token is kept, and how to undo it. */
async function signedIn(options: LoginOptions, credentials: Credentials, path: string): Promise<number> {
  const me = await callApi({ apiUrl: credentials.api_url, method: 'GET', path: 'v1/me', token: credentials.token }).catch(() => undefined);
  const email = me?.status === 200 && typeof me.json?.email === 'string' ? me.json.email : undefined;
  if (options.json) {
    options.out(JSON.stringify({ signed_in: true, email: email ?? null, api_url: credentials.api_url, credentials: path }, null, 2));
    return 0;
  }
  options.out(`Signed in${email ? ` as ${email}` : ''} to ${credentials.api_url}.`);
  options.out(`The token "${credentials.device_name}" is kept in ${path} (readable by you alone); plinth logout revokes it.`);
  return 0;
}

/** RFC 7009 revocation of a kept token, at the endpoint the app's metadata names (else /oauth/revoke). */
async function revoke(credentials: Credentials): Promise<{ endpoint: string; answer: ApiAnswer }> {
  const appUrl = credentials.app_url;
  const found = await metadataOf(appUrl);
  const endpoint = 'metadata' in found && found.metadata.revocation_endpoint ? found.metadata.revocation_endpoint : `${appUrl}/oauth/revoke`;
  const answer = await callApi({
    apiUrl: appUrl,
    method: 'POST',
    path: endpoint,
    ...form({ token: credentials.token, token_type_hint: 'access_token', client_id: CLIENT_ID }),
  });
  return { endpoint, answer };
}

export async function logoutCommand(options: LoginOptions): Promise<number> {
  const credentials = options.credentials;
  const path = credentialsPath(options.configDir);
  if (!credentials) {
    options.err(`Not signed in: there is no ${path}.`);
    return 0;
  }
  const { endpoint, answer: revoked } = await revoke(credentials);
  // RFC 7009 2.2: 200 whether or not the token was still valid.
  if (revoked.status !== 200) {
    const failed = oauthFailure(options, `Revoking the token at ${endpoint}`, revoked);
    options.err(`${path} is kept: run plinth logout again, or revoke the token on the app's API tokens page and delete the file.`);
    return failed;
  }
  await deleteCredentials(options.configDir);
  if (options.json) options.out(JSON.stringify({ signed_in: false, revoked: true }, null, 2));
  else options.out(`Signed out of ${credentials.api_url}: the token is revoked and ${path} is deleted.`);
  return 0;
}

export interface WhoamiOptions extends CommandIo {
  apiUrl: string;
  token?: string;
  /** The token of `plinth login`, when it was issued by this API. */
  savedToken?: string;
  configDir: string;
}

/** `plinth whoami`: GET /v1/me with the token the commands would use. */
export async function whoamiCommand(options: WhoamiOptions): Promise<number> {
  const token = options.token ?? options.savedToken;
  if (!token) {
    options.err(`Not signed in to ${options.apiUrl}: run plinth login, or pass an API token with --token or PLINTH_TOKEN.`);
    return 1;
  }
  const answer = await callApi({ apiUrl: options.apiUrl, method: 'GET', path: 'v1/me', token });
  if (answer.status !== 200) {
    const failed = reportFailure(options, 'Reading the account', answer);
    if (answer.status === 401 && !options.token) options.err(`The token of plinth login no longer works (revoked?): run plinth login again.`);
    return failed;
  }
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  const me = answer.json as { email: string; plan: string; sites_used: number; sites_limit: number };
  const from = options.token ? 'the given token' : `the token of plinth login (${credentialsPath(options.configDir)})`;
  options.out(`${me.email}, plan ${me.plan}, ${me.sites_used} of ${me.sites_limit} sites, at ${options.apiUrl} with ${from}`);
  return 0;
}
