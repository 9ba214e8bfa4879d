import { randomBytes, randomInt } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { checkDeviceName, formatUserCode, newUserCode, normaliseUserCode } from '../rules/index.js';
import { hashToken, type AccountRecord, type DeviceGrantRecord, type RateCheck } from '../store/index.js';
import { requireAccount } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { accountActor, actorOf, recordEvent } from './events.js';
import { clientFor, invalidClient, OAUTH_PATHS, OAUTH_SCOPE, oauthError } from './oauth-shared.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';
import { newApiToken } from './tokens.js';
import { iso } from './views.js';

/** RFC 8628 §3.4: the grant type of a device's token request. */
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** A device sign-in waits this long for the person (RFC 8628 `expires_in`). */
export const DEVICE_CODE_LIFETIME_MS = 10 * 60_000;

/**
 * Public clients Plinth knows without registration: its own command-line tool. Their ids are not
 * of the registered form (`mcp_…`) nor URLs, so nobody can register or describe one.
 */
const KNOWN_CLIENTS: Readonly<Record<string, string>> = { 'plinth-cli': 'Plinth CLI' };

/** RFC 8628 §3.2: the answer to a device authorization request. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** What the device's token request gets once the person approved: an API token of their account. */
export interface DeviceTokenResponse {
  access_token: string;
  token_type: 'Bearer';
  scope: string;
}

/** A pending device sign-in as the person who typed its code sees it. */
export interface DeviceRequestView {
  /** `XXXX-XXXX`. */
  user_code: string;
  device_name: string;
  client_id: string;
  client_name: string;
  /** `plinth`: Plinth's own tool; `registered`: a name the app gave itself; `metadata_document`: described at its URL. */
  client_kind: 'plinth' | 'registered' | 'metadata_document';
  /** The network (IPv4 /24, IPv6 /64) the device asked from, and whether the person is on it now. */
  network: string;
  same_network: boolean;
  requested_at: string;
  expires_at: string;
}

export interface DeviceOperations {
  /** RFC 8628 §3.1, `POST <app>/oauth/device_authorization`: a new device sign-in; capped per network. */
  authorize(form: URLSearchParams, network: string): Promise<DeviceAuthorization>;
  /**
   * The pending sign-in a signed-in person's typed code leads to. Every code typed counts against
   * the account's and the network's tries and a right one gives its try back, so past the cap
   * every code is refused (the right one too) and guessing learns nothing.
   */
  find(caller: Caller, typedCode: unknown, network: string): Promise<DeviceRequestView>;
  /** The person approves or denies the sign-in, once; counted as `find`. */
  decide(caller: Caller, typedCode: unknown, decision: 'approve' | 'deny', network: string): Promise<DeviceRequestView>;
}

export function deviceOperations(deps: OperationsDeps): DeviceOperations {
  return {
    authorize: (form, network) => authorizeDevice(deps, form, network),
    find: (caller, typed, network) => findDeviceRequest(deps, caller, typed, network),
    decide: (caller, typed, decision, network) => decideDeviceRequest(deps, caller, typed, decision, network),
  };
}

async function clientOf(deps: OperationsDeps, clientId: string, network: string): Promise<{ name: string }> {
  if (clientId === '') throw invalidClient('client_id is required (public clients identify with it alone).');
  const known = KNOWN_CLIENTS[clientId];
  if (known !== undefined) return { name: known };
  const client = await clientFor(deps, clientId, network);
  if (!client) throw invalidClient('Unknown client_id. Plinth\'s command-line tool is "plinth-cli"; other apps register first.');
  return client;
}

export async function authorizeDevice(deps: OperationsDeps, form: URLSearchParams, network: string): Promise<DeviceAuthorization> {
  const { store, config, log } = deps;
  // Anyone may start one, signed out: each is a write, so they are capped per network.
  await takeOrRefuse(store, [cap(`device-authorize:${network}`, config.app.deviceAuthorizationsPerHour, HOUR_MS)], (seconds) => ({
    message: `Too many device sign-ins were started from this network; try again in ${Math.ceil(seconds / 60)} minutes.`,
    agentMessage: `Device sign-ins are capped per network. Try again in ${Math.ceil(seconds / 60)} minutes.`,
  }));
  const clientId = form.get('client_id') ?? '';
  const client = await clientOf(deps, clientId, network);
  const scope = form.get('scope');
  if (scope !== null && scope.split(' ').some((value) => value !== '' && value !== OAUTH_SCOPE)) {
    throw oauthError('invalid_scope', `The only scope is "${OAUTH_SCOPE}" (everything the account can do); leave scope out or send that.`);
  }
  const device = checkDeviceName(form.get('device_name'));
  if (device.problem) throw oauthError('invalid_request', device.problem);
  const deviceCode = `pld_${randomBytes(32).toString('base64url')}`;
  const now = deps.now();
  const grant: Omit<DeviceGrantRecord, 'kind' | 'userCodeKey' | 'status'> = {
    clientId,
    clientName: client.name,
    deviceName: device.name ?? client.name,
    scope: OAUTH_SCOPE,
    network,
    createdAt: now,
    expiresAt: now + DEVICE_CODE_LIFETIME_MS,
    // What the device is told to wait, to begin with, and the spacing `slow_down` enforces.
    intervalS: config.app.devicePollIntervalS,
  };
  // A new user code collides with a live one about once in 2.5e10 / (live codes): try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = newUserCode(randomInt);
    if (!(await store.createDeviceGrant(hashToken(deviceCode), userCode, grant))) continue;
    log.info({ client: clientId }, 'oauth.device_started');
    const verification = `${config.publicUrls.app}${OAUTH_PATHS.device}`;
    return {
      device_code: deviceCode,
      user_code: formatUserCode(userCode),
      verification_uri: verification,
      verification_uri_complete: `${verification}?user_code=${formatUserCode(userCode)}`,
      expires_in: DEVICE_CODE_LIFETIME_MS / 1000,
      interval: grant.intervalS,
    };
  }
  throw new ServiceError('unavailable', 'No free user code was found; try again.');
}

/** The person behind a session: tokens of the account are handed out by people, not by other tokens. */
function person(caller: Caller): AccountRecord {
  const account = requireAccount(caller, 'approving a device');
  if (caller.kind === 'account' && caller.credential !== 'session') {
    throw new ServiceError('forbidden', 'Devices are approved by a signed-in person in the account app.');
  }
  return account;
}

/** The account's and the network's tries of user codes, counted before the code is looked at. */
async function takeTry(deps: OperationsDeps, account: AccountRecord, network: string): Promise<{ checks: RateCheck[]; at: number }> {
  const limit = deps.config.app.deviceCodeTriesPerHour;
  const checks = [cap(`device-code-account:${account.id}`, limit, HOUR_MS), cap(`device-code-network:${network}`, limit, HOUR_MS)].filter(
    (check): check is RateCheck => check !== undefined,
  );
  const at = deps.now();
  await takeOrRefuse(deps.store, checks, (seconds) => ({
    message: `Too many wrong codes were typed; try again in ${Math.ceil(seconds / 60)} minutes.`,
    agentMessage: `User codes are capped per account and network. Try again in ${Math.ceil(seconds / 60)} minutes.`,
  }));
  return { checks, at };
}

/** A right code gives its try back, into the window it was taken from (a new window starts full anyway). */
async function giveBack(deps: OperationsDeps, taken: { checks: RateCheck[]; at: number }): Promise<void> {
  if (taken.checks.length === 0 || Math.floor(deps.now() / HOUR_MS) !== Math.floor(taken.at / HOUR_MS)) return;
  try {
    await deps.store.takeRateTokens(taken.checks.map((check) => ({ ...check, hits: -1 })));
  } catch (err) {
    deps.log.warn({ err }, 'oauth.device_try_not_returned');
  }
}

const noSuchCode = (): ServiceError =>
  new ServiceError('not_found', 'No sign-in is waiting for this code. Check it against the one your device shows; codes work once and for 10 minutes.', {
    details: { field: 'user_code' },
  });

function parseCode(typed: unknown): string {
  const code = normaliseUserCode(typed);
  if (code === undefined) {
    throw new ServiceError('bad_request', 'A code is 8 letters, such as BCDF-GHJK, as your device shows it.', { details: { field: 'user_code' } });
  }
  return code;
}

function requestView(grant: DeviceGrantRecord, userCode: string, network: string): DeviceRequestView {
  return {
    user_code: formatUserCode(userCode),
    device_name: grant.deviceName,
    client_id: grant.clientId,
    client_name: grant.clientName,
    client_kind: KNOWN_CLIENTS[grant.clientId] !== undefined ? 'plinth' : grant.clientId.startsWith('https://') ? 'metadata_document' : 'registered',
    network: grant.network,
    same_network: grant.network === network,
    requested_at: iso(grant.createdAt),
    expires_at: iso(grant.expiresAt),
  };
}

export async function findDeviceRequest(deps: OperationsDeps, caller: Caller, typed: unknown, network: string): Promise<DeviceRequestView> {
  const account = person(caller);
  // A code that cannot be one is refused before counting: it matches nothing, so it tells nothing.
  const code = parseCode(typed);
  const taken = await takeTry(deps, account, network);
  const grant = deps.store.findDeviceGrant(code);
  if (!grant || grant.status !== 'pending' || grant.expiresAt <= deps.now()) throw noSuchCode();
  await giveBack(deps, taken);
  return requestView(grant, code, network);
}

export async function decideDeviceRequest(
  deps: OperationsDeps,
  caller: Caller,
  typed: unknown,
  decision: 'approve' | 'deny',
  network: string,
): Promise<DeviceRequestView> {
  const account = person(caller);
  const code = parseCode(typed);
  const taken = await takeTry(deps, account, network);
  const outcome = await deps.store.decideDeviceGrant(code, account.id, decision === 'approve' ? 'approved' : 'denied');
  if (!outcome.ok) throw noSuchCode();
  await giveBack(deps, taken);
  deps.log.info({ account: account.id, client: outcome.grant.clientId, decision }, 'oauth.device_decided');
  if (decision === 'approve') {
    await recordEvent(deps, actorOf(caller), { kind: 'device.approved', accountId: account.id, details: { client: outcome.grant.clientId, network } });
  }
  return requestView(outcome.grant, code, network);
}

/** RFC 8628 §3.4, §3.5: the device's poll of the token endpoint. */
export async function exchangeDeviceCode(deps: OperationsDeps, form: URLSearchParams, clientId: string): Promise<DeviceTokenResponse> {
  const { store, config, log } = deps;
  const deviceCode = form.get('device_code') ?? '';
  if (deviceCode === '') throw oauthError('invalid_request', 'device_code is required.');
  const token = newApiToken();
  const poll = await store.pollDeviceGrant(hashToken(deviceCode), clientId, hashToken(token));
  switch (poll.outcome) {
    case 'issued': {
      log.info({ account: poll.grant.accountId, client: clientId, token: poll.token.id }, 'oauth.device_token_issued');
      // The person who approved the device made this token of their account (docs/audit-log.md).
      const account = poll.grant.accountId === undefined ? undefined : store.getAccount(poll.grant.accountId);
      if (account) {
        await recordEvent(deps, accountActor(account), {
          kind: 'token.created',
          accountId: account.id,
          details: { token: poll.token.id, name: poll.token.name },
        });
      }
      return { access_token: token, token_type: 'Bearer', scope: poll.grant.scope };
    }
    case 'pending':
      throw oauthError(
        'authorization_pending',
        `Waiting for the person to approve this device at ${config.publicUrls.app}${OAUTH_PATHS.device}; ask again after the interval.`,
      );
    case 'slow_down':
      throw oauthError('slow_down', `Polling too fast: wait ${poll.intervalS} seconds between requests from now on.`);
    case 'denied':
      throw oauthError('access_denied', 'The person denied this sign-in.');
    case 'expired':
      throw oauthError('expired_token', 'The sign-in expired before it was approved; start a new one.');
    case 'used':
      throw oauthError('invalid_grant', 'This device code was exchanged for a token already; start a new sign-in.');
    case 'wrong_client':
      throw oauthError('invalid_grant', 'This device code was issued to another client.');
    default:
      throw oauthError('invalid_grant', 'The device code is not valid (unknown, or from another server).');
  }
}
