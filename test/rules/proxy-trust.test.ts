import { describe, expect, it } from 'vitest';
import { addressBytes, describeProxyTrust, inNetworks, parseNetwork, parseProxyTrust, type ProxyTrust } from '../../src/rules/index.js';

const hops = (n: number): ProxyTrust => ({ kind: 'hops', hops: n });

describe('parseProxyTrust (PLINTH_TRUST_PROXY)', () => {
  it.each([
    ['', { kind: 'none' }],
    ['0', { kind: 'none' }],
    ['00', { kind: 'none' }],
    ['false', { kind: 'none' }],
    [' FALSE ', { kind: 'none' }],
    ['1', hops(1)],
    ['true', hops(1)],
    ['2', hops(2)],
    ['16', hops(16)],
  ])('%j means %o', (raw, trust) => {
    expect(parseProxyTrust(raw)).toEqual({ ok: true, trust });
  });

  it.each([
    ['10.0.0.0/8', 1],
    ['10.0.0.1', 1],
    ['10.0.0.0/8, 192.168.1.5 ,::1', 3],
    ['2001:db8::/32', 1],
    ['loopback', 2],
    ['loopback,linklocal,uniquelocal', 8],
    ['LOOPBACK, 203.0.113.0/24', 3],
    ['10.0.0.0/8,', 1],
  ])('%j is a list of %i trusted networks', (raw, count) => {
    const parsed = parseProxyTrust(raw);
    expect(parsed.ok && parsed.trust.kind === 'networks' && parsed.trust.networks.length).toBe(count);
  });

  it.each(['yes', '-1', '17', '1.5', '10.0.0.0/33', '::/129', '10.0.0.0/x', '10.0.0.0/', '10.0.0', 'proxy.internal', '[::1]', '10.0.0.1:80', ',', '*'])(
    'refuses %j',
    (raw) => {
      expect(parseProxyTrust(raw).ok).toBe(false);
    },
  );
});

describe('trusted networks', () => {
  const list = (text: string) => text.split(',').map((item) => parseNetwork(item.trim())!);
  it.each([
    ['10.1.2.3', '10.0.0.0/8', true],
    ['11.1.2.3', '10.0.0.0/8', false],
    ['::ffff:10.1.2.3', '10.0.0.0/8', true],
    ['0000:0000:0000:0000:0000:ffff:0a01:0203', '10.0.0.0/8', true],
    ['172.31.255.255', '172.16.0.0/12', true],
    ['172.32.0.0', '172.16.0.0/12', false],
    ['192.168.1.5', '192.168.1.5', true],
    ['192.168.1.6', '192.168.1.5', false],
    ['2001:db8:1::1', '2001:db8::/32', true],
    ['2001:db9::1', '2001:db8::/32', false],
    ['::1', '::1', true],
    ['::2', '::1', false],
    ['1.2.3.4', '0.0.0.0/0', true],
    ['2001:db8::1', '0.0.0.0/0', false],
    ['2001:db8::1', '::/0', true],
    ['fe80::1%eth0', 'fe80::/10', true],
    ['::10.1.2.3', '10.0.0.0/8', true],
    ['::ffff:0:0', '::ffff:0:0/96', true],
    ['10.1.2.3', '::ffff:0:0/96', true],
  ])('%s in %s: %s', (address, networks, expected) => {
    expect(inNetworks(addressBytes(address)!, list(networks))).toBe(expected);
  });
});

describe('describeProxyTrust', () => {
  it.each([
    ['0', '0'],
    ['2', '2'],
    ['true', '1'],
    ['10.0.0.0/8, ::1', '10.0.0.0/8, 0:0:0:0:0:0:0:1'],
    ['loopback', '127.0.0.0/8, 0:0:0:0:0:0:0:1'],
    ['192.0.2.7', '192.0.2.7'],
    ['2001:db8::/32', '2001:db8:0:0:0:0:0:0/32'],
  ])('%s reads back as %s', (setting, spelled) => {
    const parsed = parseProxyTrust(setting);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(describeProxyTrust(parsed.trust)).toBe(spelled);
  });
});
