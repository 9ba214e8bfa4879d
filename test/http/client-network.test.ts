import { describe, expect, it } from 'vitest';
import { clientAddress, forwardedFor, networkOf, remoteAddressText } from '../../src/http/index.js';
import { parseProxyTrust, type ProxyTrust } from '../../src/rules/index.js';

const trust = (raw: string): ProxyTrust => {
  const parsed = parseProxyTrust(raw);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.trust;
};

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
    // The deprecated IPv4-compatible form is read as ipaddr.js reads it: IPv4-mapped.
    ['::198.51.100.23', '198.51.100.0/24'],
    ['not an address', 'other:not an address'],
  ])('%s is in %s', (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});

describe('remoteAddressText', () => {
  // uWS's getRemoteAddress: 4 bytes on an IPv4 socket, 16 on an IPv6 (or dual-stack) one.
  it.each([
    [[203, 0, 113, 7], '203.0.113.7'],
    [[127, 0, 0, 1], '127.0.0.1'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 23], '198.51.100.23'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], '0:0:0:0:0:0:0:1'],
    [[0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 1], '2001:db8:1:2:ffff:0:0:1'],
    [[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0xab, 0xcd, 0, 0, 0, 0, 0x12, 0x34], 'fe80:0:0:0:abcd:0:0:1234'],
    [[], ''],
    [[1, 2, 3], ''],
  ])('%j reads %s', (bytes, text) => {
    expect(remoteAddressText(new Uint8Array(bytes).buffer)).toBe(text);
  });

  it('names the same client and network as the text uWS makes', () => {
    const bytes = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 1];
    const text = remoteAddressText(new Uint8Array(bytes).buffer);
    expect(clientAddress(text, '', trust('0'))).toBe('2001:db8:1:2:ffff::1');
    expect(networkOf(text)).toBe('2001:db8:1:2::/64');
  });
});

describe('clientAddress', () => {
  // [socket, X-Forwarded-For (every line joined), PLINTH_TRUST_PROXY, the address that counts]
  it.each([
    // No proxy trusted: the header is the client's own words.
    ['10.0.0.1', '203.0.113.9', '0', '10.0.0.1'],
    ['10.0.0.1', '203.0.113.9', 'false', '10.0.0.1'],
    ['0000:0000:0000:0000:0000:ffff:0a00:0001', '', '0', '10.0.0.1'],
    // IPv6 in its short form (RFC 5952), however it was written.
    ['0000:0000:0000:0000:0000:0000:0000:0001', '', '0', '::1'],
    ['2001:DB8:0:0:0:0:0:1', '', '0', '2001:db8::1'],

    // One proxy: the entry it appended, the rightmost.
    ['10.0.0.1', '', '1', '10.0.0.1'],
    ['10.0.0.1', '203.0.113.9', '1', '203.0.113.9'],
    ['10.0.0.1', '203.0.113.9', 'true', '203.0.113.9'],
    ['10.0.0.1', '203.0.113.7, 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7,198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7 ,\t198.51.100.9\t', '1', '198.51.100.9'],
    ['10.0.0.1', '1.1.1.1, 2.2.2.2, 3.3.3.3, 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, 2001:db8::1', '1', '2001:db8::1'],
    ['10.0.0.1', '203.0.113.7, 2001:DB8::1', '1', '2001:db8::1'],
    ['10.0.0.1', '203.0.113.7, [2001:db8::1]', '1', '2001:db8::1'],
    ['10.0.0.1', '203.0.113.7, [2001:db8::1]:443', '1', '2001:db8::1'],
    ['10.0.0.1', '203.0.113.7, 198.51.100.9:5678', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, [::1]:80', '1', '::1'],
    ['10.0.0.1', '203.0.113.7, ::ffff:198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, ::FFFF:198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, [::ffff:198.51.100.9]:80', '1', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, fe80::1%eth0', '1', 'fe80::1'],
    // What the client wrote to the left is never read, however odd.
    ['10.0.0.1', 'garbage, 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', 'unknown, 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '_hidden, 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', 'for=203.0.113.7, 198.51.100.9', '1', '198.51.100.9'],
    // Empty entries are no entries.
    ['10.0.0.1', '203.0.113.7,,198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', '198.51.100.9,', '1', '198.51.100.9'],
    ['10.0.0.1', ', 198.51.100.9', '1', '198.51.100.9'],
    ['10.0.0.1', ',', '1', '10.0.0.1'],
    ['10.0.0.1', ' \t ', '1', '10.0.0.1'],
    // An entry that is not an address where the proxy's should be: the connection's address.
    ['10.0.0.1', '198.51.100.9, garbage', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, unknown', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, _hidden', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, "203.0.113.7"', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, [203.0.113.7]', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 203.0.113.7:http', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 203.0.113.7:', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 203.0.113.07', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 0x7f.0.0.1', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 203.0.113', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 203.0.113.7 203.0.113.8', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, for=203.0.113.7', '1', '10.0.0.1'],
    ['10.0.0.1', '198.51.100.9, 2001:db8::1%', '1', '10.0.0.1'],

    // Two proxies: the second entry from the right.
    ['10.0.0.1', '203.0.113.7, 198.51.100.9, 10.0.0.2', '2', '198.51.100.9'],
    ['10.0.0.1', '198.51.100.9, 10.0.0.2', '2', '198.51.100.9'],
    // Shorter than the hop count: the header did not pass every proxy; not trusted.
    ['10.0.0.1', '198.51.100.9', '2', '10.0.0.1'],
    ['10.0.0.1', 'garbage, 198.51.100.9', '3', '10.0.0.1'],
    // A hop that is not an address breaks the chain.
    ['10.0.0.1', '198.51.100.9, unknown', '2', '10.0.0.1'],
    ['10.0.0.1', 'unknown, 10.0.0.2', '2', '10.0.0.1'],

    // Trusted networks: only a trusted connection's header is read, walking left past trusted hops.
    ['203.0.113.50', '198.51.100.9', '10.0.0.0/8', '203.0.113.50'],
    ['10.0.0.1', '198.51.100.9', '10.0.0.0/8', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, 198.51.100.9', '10.0.0.0/8', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, 198.51.100.9, 10.0.0.3, 10.0.0.2', '10.0.0.0/8', '198.51.100.9'],
    ['10.0.0.1', '203.0.113.7, 198.51.100.9, 10.0.0.2', '10.0.0.1, 10.0.0.2', '198.51.100.9'],
    ['10.0.0.1', '198.51.100.9, 10.0.0.9', '10.0.0.1, 10.0.0.2', '10.0.0.9'],
    ['10.0.0.1', '203.0.113.7, [::1]:80', '10.0.0.0/8, ::1', '203.0.113.7'],
    ['::1', '198.51.100.9', 'loopback', '198.51.100.9'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '198.51.100.9', 'loopback', '198.51.100.9'],
    ['0000:0000:0000:0000:0000:ffff:0a00:0001', '198.51.100.9', '10.0.0.0/8', '198.51.100.9'],
    ['::ffff:10.0.0.1', '203.0.113.7, ::ffff:10.0.0.2', '10.0.0.0/8', '203.0.113.7'],
    ['10.0.0.1', '2001:db8::7, 2001:db8:ffff::1', '10.0.0.0/8, 2001:db8:ffff::/48', '2001:db8::7'],
    // Every hop trusted (a request from inside): the connection's address.
    ['10.0.0.1', '10.0.0.3, 10.0.0.2', '10.0.0.0/8', '10.0.0.1'],
    // A hop the walk cannot read stops it before anything the client wrote.
    ['10.0.0.1', '203.0.113.7, unknown, 10.0.0.2', '10.0.0.0/8', '10.0.0.1'],
    ['10.0.0.1', '203.0.113.7, , 10.0.0.2', '10.0.0.0/8', '203.0.113.7'],
    ['10.0.0.1', 'garbage, 198.51.100.9', '10.0.0.0/8', '198.51.100.9'],
  ])('socket %s with X-Forwarded-For %j (PLINTH_TRUST_PROXY=%s) counts as %s', (socket, forwarded, setting, expected) => {
    expect(clientAddress(socket, forwarded, trust(setting))).toBe(expected);
  });

  it.each(['1', '2', '10.0.0.0/8'])('never lets a client choose its network by what it sends (PLINTH_TRUST_PROXY=%s)', (setting) => {
    // The proxies append the real address (198.51.100.9) and their own; the client varies the rest.
    const proxies = setting === '2' ? ', 10.0.0.2' : '';
    const spellings = [
      '203.0.113.7',
      '203.0.113.7, 192.0.2.1',
      '[2001:db8::1]:1',
      '::ffff:192.0.2.1',
      'unknown',
      '_hidden',
      '',
      ',,,',
      'garbage',
      '10.0.0.2',
      '10.0.0.2, 10.0.0.3',
      'for=192.0.2.1',
      `${'1.2.3.4, '.repeat(200)}5.6.7.8`,
    ];
    const networks = new Set(spellings.map((sent) => networkOf(clientAddress('10.0.0.1', `${sent}, 198.51.100.9${proxies}`, trust(setting)))));
    expect([...networks]).toEqual(['198.51.100.0/24']);
  });
});

describe('forwardedFor', () => {
  const lines = (...headers: Array<[string, string]>) => ({
    forEach: (each: (name: string, value: string) => void) => headers.forEach(([n, v]) => each(n, v)),
  });
  it.each([
    [[], ''],
    [[['x-forwarded-for', '203.0.113.7']], '203.0.113.7'],
    [
      [
        ['x-forwarded-for', '203.0.113.7'],
        ['x-forwarded-for', '198.51.100.9'],
      ],
      '203.0.113.7,198.51.100.9',
    ],
    [
      [
        ['x-forwarded-for', ''],
        ['host', 'x'],
        ['x-forwarded-for', '198.51.100.9'],
      ],
      ',198.51.100.9',
    ],
    [
      [
        ['forwarded', 'for=203.0.113.7'],
        ['x-real-ip', '203.0.113.7'],
      ],
      '',
    ],
  ] as Array<[Array<[string, string]>, string]>)('joins every X-Forwarded-For line of %j', (headers, joined) => {
    expect(forwardedFor(lines(...headers))).toBe(joined);
  });
});
