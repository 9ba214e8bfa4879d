import { describe, expect, it } from 'vitest';
import { clientAddress, networkOf } from '../../src/http/index.js';

describe('networkOf', () => {
  it.each([
    ['203.0.113.7', '203.0.113.0/24'],
    ['203.0.113.255', '203.0.113.0/24'],
    ['127.0.0.1', '127.0.0.0/24'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:0000:0000:0001', '2001:db8:1:2::/64'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '0:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::ffff:198.51.100.23', '198.51.100.0/24'],
    ['0000:0000:0000:0000:0000:ffff:c633:6417', '198.51.100.0/24'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'other:not an address'],
  ])('%s is in %s', (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});

describe('clientAddress', () => {
  it.each([
    ['10.0.0.1', '', false, '10.0.0.1'],
    ['10.0.0.1', '203.0.113.9', false, '10.0.0.1'],
    ['10.0.0.1', '203.0.113.9', true, '203.0.113.9'],
    ['10.0.0.1', '203.0.113.9, 10.0.0.2', true, '203.0.113.9'],
    ['10.0.0.1', ' 2001:db8::1 , 10.0.0.2', true, '2001:db8::1'],
    ['10.0.0.1', '[2001:db8::1]:443', true, '2001:db8::1'],
    ['10.0.0.1', '203.0.113.9:5555', true, '203.0.113.9'],
    ['10.0.0.1', 'garbage', true, '10.0.0.1'],
    ['10.0.0.1', 'unknown, 203.0.113.9', true, '10.0.0.1'],
  ])('socket %s with X-Forwarded-For %j (trusted: %s) counts as %s', (socket, forwarded, trust, expected) => {
    expect(clientAddress(socket, forwarded, trust)).toBe(expected);
  });
});
