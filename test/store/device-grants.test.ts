import { describe, expect, it } from 'vitest';
import { hashToken, type DeviceGrantRecord } from '../../src/store/index.js';
import { createAccount, useTestStore } from './helpers.js';

/** Device sign-ins (RFC 8628) in the store: created once per user code, decided once, polled, exchanged once, pruned. */

const t = useTestStore('device');
let counter = 0;
const next = (prefix: string): string => `${prefix}${++counter}`;
/** A user code of its own for every sign-in: the counter in base 20, written in the code's alphabet. */
function userCode(): string {
  let n = ++counter;
  let code = '';
  for (let i = 0; i < 8; i++, n = Math.floor(n / 20)) code += 'BCDFGHJKLMNPQRSTVWXZ'[n % 20];
  return code;
}

function fields(clientId = 'plinth-cli'): Omit<DeviceGrantRecord, 'kind' | 'userCodeKey' | 'status'> {
  return {
    clientId,
    clientName: 'Plinth CLI',
    deviceName: 'laptop',
    scope: 'sites',
    network: '192.0.2.0/24',
    createdAt: t.clock.now,
    expiresAt: t.clock.now + 600_000,
    intervalS: 5,
  };
}

async function started(clientId?: string): Promise<{ deviceCode: string; code: string }> {
  const deviceCode = next('pld_');
  const code = userCode();
  expect(await t.store.createDeviceGrant(hashToken(deviceCode), code, fields(clientId))).toBe(true);
  return { deviceCode, code };
}

const poll = (deviceCode: string, clientId = 'plinth-cli', token = next('pl_')) => t.store.pollDeviceGrant(hashToken(deviceCode), clientId, hashToken(token));

describe('device sign-ins', () => {
  it('refuses a second live sign-in with the same user code, and finds the first by it', async () => {
    const { code } = await started();
    expect(await t.store.createDeviceGrant(hashToken(next('pld_')), code, fields())).toBe(false);
    expect(t.store.findDeviceGrant(code)).toMatchObject({ kind: 'device', status: 'pending', deviceName: 'laptop' });
    expect(t.store.findDeviceGrant('ZZZZZZZZ')).toBeUndefined();
  });

  it('polls pending, then slow_down when too soon (and the interval grows), then pending after the interval', async () => {
    const { deviceCode } = await started();
    expect(await poll(deviceCode)).toEqual({ outcome: 'pending' });
    t.clock.now += 1000;
    expect(await poll(deviceCode)).toEqual({ outcome: 'slow_down', intervalS: 10 });
    t.clock.now += 10_000;
    expect(await poll(deviceCode)).toEqual({ outcome: 'pending' });
  });

  it('holds a one-second interval too (PLINTH_DEVICE_POLL_INTERVAL_S=1): a poll at once gets slow_down, one a second later does not', async () => {
    const hurried = next('pld_');
    expect(await t.store.createDeviceGrant(hashToken(hurried), userCode(), { ...fields(), intervalS: 1 })).toBe(true);
    expect(await poll(hurried)).toEqual({ outcome: 'pending' });
    t.clock.now += 400;
    expect(await poll(hurried)).toEqual({ outcome: 'slow_down', intervalS: 6 });
    t.clock.now += 6000;
    expect(await poll(hurried)).toEqual({ outcome: 'pending' });

    const steady = next('pld_');
    expect(await t.store.createDeviceGrant(hashToken(steady), userCode(), { ...fields(), intervalS: 1 })).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect(await poll(steady)).toEqual({ outcome: 'pending' });
      t.clock.now += 1000;
    }
  });

  it('is decided once, after which its user code leads nowhere', async () => {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const { deviceCode, code } = await started();
    expect(await t.store.decideDeviceGrant(code, account.id, 'denied')).toMatchObject({ ok: true, grant: { status: 'denied', accountId: account.id } });
    expect(await t.store.decideDeviceGrant(code, account.id, 'approved')).toEqual({ ok: false, reason: 'not_found' });
    expect(t.store.findDeviceGrant(code)).toBeUndefined();
    expect(await poll(deviceCode)).toEqual({ outcome: 'denied' });
  });

  it('exchanges an approved sign-in once for an API token of the account, named after the device and bound to the client', async () => {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const { deviceCode, code } = await started();
    await t.store.decideDeviceGrant(code, account.id, 'approved');
    expect(await poll(deviceCode, 'mcp_other')).toEqual({ outcome: 'wrong_client' });
    const token = next('pl_');
    const issued = await poll(deviceCode, 'plinth-cli', token);
    expect(issued).toMatchObject({ outcome: 'issued', token: { name: 'laptop' } });
    expect(t.store.findToken(hashToken(token))).toMatchObject({ kind: 'api', accountId: account.id, name: 'laptop', clientId: 'plinth-cli' });
    expect(t.store.listApiTokens(account.id).map((info) => info.name)).toEqual(['laptop']);
    const again = next('pl_');
    expect(await poll(deviceCode, 'plinth-cli', again)).toEqual({ outcome: 'used' });
    expect(t.store.findToken(hashToken(again))).toBeUndefined();
  });

  it('expires: no decision, no token, and the record is pruned an hour later', async () => {
    const account = await createAccount(t.store, `${next('a')}@example.com`);
    const { deviceCode, code } = await started();
    t.clock.now += 600_000;
    expect(await t.store.decideDeviceGrant(code, account.id, 'approved')).toEqual({ ok: false, reason: 'not_found' });
    expect(await poll(deviceCode)).toEqual({ outcome: 'expired' });
    await t.store.pruneOAuth(t.clock.now);
    expect(await poll(deviceCode)).toEqual({ outcome: 'expired' });
    t.clock.now += 3600_000;
    await t.store.pruneOAuth(t.clock.now);
    expect(await poll(deviceCode)).toEqual({ outcome: 'not_found' });
  });

  it('is no authorization code: redeeming a device code as one finds nothing and leaves it pending', async () => {
    const { deviceCode } = await started();
    const outcome = await t.store.redeemAuthorizationCode(
      hashToken(deviceCode),
      () => true,
      { id: next('grant_'), clientName: 'x', redirectHost: 'x' },
      {
        accessHash: hashToken(next('pla_')),
        accessExpiresAt: t.clock.now + 1000,
        refreshHash: hashToken(next('plr_')),
        refreshExpiresAt: t.clock.now + 1000,
      },
    );
    expect(outcome).toEqual({ ok: false, reason: 'not_found' });
    expect(await poll(deviceCode)).toEqual({ outcome: 'pending' });
  });
});
