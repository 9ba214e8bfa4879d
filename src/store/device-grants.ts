import { isPollTooSoon } from '../rules/index.js';
import { hashToken, newId } from './ids.js';
import type { MetadataDbs } from './metadata-dbs.js';
import type { ApiTokenInfo, DeviceGrantRecord } from './types.js';

/** Device sign-ins are kept this long past their expiry (then pruned with the OAuth codes). */
export const DEVICE_RECORD_GRACE_MS = 3600_000;

/** The key of a user code's index record in `oauthCodes` (hashed like every code there). */
export function userCodeKey(userCode: string): string {
  return hashToken(`device-user-code:${userCode}`);
}

export type DeviceDecision = { ok: true; grant: DeviceGrantRecord } | { ok: false; reason: 'not_found' | 'expired' };

export type DevicePoll =
  | { outcome: 'not_found' | 'wrong_client' | 'expired' | 'denied' | 'used' | 'pending' }
  | { outcome: 'slow_down'; intervalS: number }
  | { outcome: 'issued'; grant: DeviceGrantRecord; token: ApiTokenInfo };

/** The device authorization grant's records (RFC 8628), kept in `oauthCodes` (see `DeviceGrantRecord`). */
export interface DeviceGrantRecords {
  /**
   * Records a new device sign-in under the hash of its device code, and its user code's index.
   * False, with nothing written, when a live sign-in already has that user code: pick another.
   */
  createDeviceGrant(deviceCodeHash: string, userCode: string, grant: Omit<DeviceGrantRecord, 'kind' | 'userCodeKey' | 'status'>): Promise<boolean>;
  /** The sign-in a user code leads to, pending or not (read-only: a wrong code takes no write). */
  findDeviceGrant(userCode: string): DeviceGrantRecord | undefined;
  /**
   * A person's decision on a pending, unexpired sign-in, once. The user code then leads nowhere,
   * so nobody else can see or decide the sign-in.
   */
  decideDeviceGrant(userCode: string, accountId: string, decision: 'approved' | 'denied'): Promise<DeviceDecision>;
  /**
   * One poll of the token endpoint (RFC 8628 §3.4, §3.5). An approved sign-in makes its API token
   * (`tokenHash`, named after the device) in the same transaction and is used up. A pending one
   * polled sooner than its interval allows (`isPollTooSoon`) gets `slow_down` and a longer interval.
   */
  pollDeviceGrant(deviceCodeHash: string, clientId: string, tokenHash: string): Promise<DevicePoll>;
}

/** RFC 8628 §3.5: each `slow_down` adds 5 seconds to the interval. */
const SLOW_DOWN_STEP_S = 5;

export function deviceGrantOps(dbs: MetadataDbs, now: () => number): DeviceGrantRecords {
  const grantAt = (hash: string): DeviceGrantRecord | undefined => {
    const entry = dbs.oauthCodes.get(hash);
    return entry !== undefined && 'kind' in entry && entry.kind === 'device' ? entry : undefined;
  };
  const hashOf = (userCode: string): string | undefined => {
    const entry = dbs.oauthCodes.get(userCodeKey(userCode));
    return entry !== undefined && 'kind' in entry && entry.kind === 'device_user_code' && entry.expiresAt > now() ? entry.deviceCodeHash : undefined;
  };

  return {
    createDeviceGrant(deviceCodeHash, userCode, fields) {
      return dbs.transact((): boolean => {
        if (hashOf(userCode) !== undefined) return false;
        const key = userCodeKey(userCode);
        void dbs.oauthCodes.put(deviceCodeHash, { ...fields, kind: 'device', userCodeKey: key, status: 'pending' });
        void dbs.oauthCodes.put(key, { kind: 'device_user_code', deviceCodeHash, expiresAt: fields.expiresAt });
        return true;
      });
    },

    findDeviceGrant(userCode) {
      const hash = hashOf(userCode);
      return hash === undefined ? undefined : grantAt(hash);
    },

    decideDeviceGrant(userCode, accountId, decision) {
      return dbs.transact((): DeviceDecision => {
        const hash = hashOf(userCode);
        const grant = hash === undefined ? undefined : grantAt(hash);
        if (!grant || grant.status !== 'pending') return { ok: false, reason: 'not_found' };
        if (grant.expiresAt <= now()) return { ok: false, reason: 'expired' };
        const decided: DeviceGrantRecord = { ...grant, status: decision, accountId, decidedAt: now() };
        void dbs.oauthCodes.put(hash!, decided);
        void dbs.oauthCodes.remove(grant.userCodeKey);
        return { ok: true, grant: decided };
      });
    },

    pollDeviceGrant(deviceCodeHash, clientId, tokenHash) {
      return dbs.transact((): DevicePoll => {
        const grant = grantAt(deviceCodeHash);
        if (!grant) return { outcome: 'not_found' };
        if (grant.clientId !== clientId) return { outcome: 'wrong_client' };
        if (grant.status === 'used') return { outcome: 'used' };
        const at = now();
        if (grant.expiresAt <= at) return { outcome: 'expired' };
        if (grant.status === 'denied') return { outcome: 'denied' };
        if (grant.status === 'approved' && grant.accountId !== undefined) {
          const token: ApiTokenInfo = { id: newId('tok_'), name: grant.deviceName, createdAt: at };
          void dbs.tokens.put(tokenHash, { kind: 'api', accountId: grant.accountId, name: token.name, createdAt: at, id: token.id, clientId: grant.clientId });
          void dbs.accountTokens.put([grant.accountId, token.id], { tokenHash, name: token.name, createdAt: at });
          const used: DeviceGrantRecord = { ...grant, status: 'used', tokenId: token.id, lastPolledAt: at };
          void dbs.oauthCodes.put(deviceCodeHash, used);
          return { outcome: 'issued', grant: used, token };
        }
        if (isPollTooSoon(grant.lastPolledAt, at, grant.intervalS)) {
          const intervalS = grant.intervalS + SLOW_DOWN_STEP_S;
          void dbs.oauthCodes.put(deviceCodeHash, { ...grant, intervalS, lastPolledAt: at });
          return { outcome: 'slow_down', intervalS };
        }
        void dbs.oauthCodes.put(deviceCodeHash, { ...grant, lastPolledAt: at });
        return { outcome: 'pending' };
      });
    },
  };
}
