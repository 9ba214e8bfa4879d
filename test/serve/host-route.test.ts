import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHostRouter, routeHost } from '../../src/serve/host-route.js';

const hosts = loadConfig({}).hosts;

describe('routeHost', () => {
  it.each([
    ['blue-fox-1234.sites.localhost', { kind: 'site', name: 'blue-fox-1234' }],
    ['blue-fox-1234.sites.localhost:8080', { kind: 'site', name: 'blue-fox-1234' }],
    ['Blue-Fox-1234.SITES.localhost', { kind: 'site', name: 'blue-fox-1234' }],
    ['blue-fox-1234.sites.localhost.', { kind: 'site', name: 'blue-fox-1234' }],
    ['a.sites.localhost', { kind: 'site', name: 'a' }],
    ['api.localhost', { kind: 'api' }],
    ['api.localhost:8080', { kind: 'api' }],
    ['mcp.localhost', { kind: 'mcp' }],
    ['app.localhost', { kind: 'app' }],
    ['localhost', { kind: 'docs' }],
    ['localhost:8080', { kind: 'docs' }],
    ['sites.localhost', { kind: 'unknown' }],
    ['.sites.localhost', { kind: 'unknown' }],
    ['a.b.sites.localhost', { kind: 'unknown' }],
    ['-bad.sites.localhost', { kind: 'unknown' }],
    ['bad-.sites.localhost', { kind: 'unknown' }],
    ['under_score.sites.localhost', { kind: 'unknown' }],
    ['xsites.localhost', { kind: 'unknown' }],
    [`${'a'.repeat(64)}.sites.localhost`, { kind: 'unknown' }],
    ['example.com', { kind: 'unknown' }],
    ['', { kind: 'unknown' }],
    ['[::1]:8080', { kind: 'unknown' }],
    ['127.0.0.1:8080', { kind: 'unknown' }],
  ])('routes %j', (host, expected) => {
    expect(routeHost(host, hosts)).toEqual(expected);
  });
});

describe('createHostRouter', () => {
  it('answers as routeHost does, the same route for the same header, within its bound', () => {
    const route = createHostRouter(hosts, 2);
    const first = route('Blue-Fox.sites.localhost:8080');
    expect(first).toEqual(routeHost('Blue-Fox.sites.localhost:8080', hosts));
    expect(route('Blue-Fox.sites.localhost:8080')).toBe(first);
    expect(route('3--blue-fox.sites.localhost')).toEqual({ kind: 'site', name: 'blue-fox', preview: 3 });
    // A third header starts the cache again; every answer is still routeHost's.
    expect(route('api.localhost')).toEqual({ kind: 'api' });
    expect(route('Blue-Fox.sites.localhost:8080')).toEqual(first);
    expect(route('example.com')).toEqual({ kind: 'unknown' });
  });

  it('answers each header of requests that alternate between hosts with its own route', () => {
    const route = createHostRouter(hosts);
    const headers = ['one.sites.localhost', 'one.sites.localhost', 'api.localhost', 'two.sites.localhost', 'one.sites.localhost', '2--one.sites.localhost'];
    // Fresh strings each time, as uWS hands them over.
    for (const header of [...headers, ...headers]) expect(route(header.split('').join(''))).toEqual(routeHost(header, hosts));
  });
});
