import { describe, expect, it } from 'vitest';
import { compileTemplate, createRouter, openApiPath } from '../../src/http/index.js';

describe('route templates', () => {
  it.each([
    ['/v1/me', '/v1/me', []],
    ['/v1/me', '/v1/me/', []],
    ['/v1/me', '/v1/mex', null],
    ['/v1/sites/{name}', '/v1/sites/my-site', ['my-site']],
    ['/v1/sites/{name}', '/v1/sites/a/b', null],
    ['/v1/sites/{name}/files/{path...}', '/v1/sites/s/files/css/a.css', ['s', 'css/a.css']],
    ['/v1/sites/{name}/files/{path...}', '/v1/sites/s/files/', null],
    ['/v1/sites/{name}/members/{email}', '/v1/sites/s/members/a%40b.com', ['s', 'a%40b.com']],
    ['/v1/deploy', '/v1/deploy.', null],
  ])('%s matches %s → %j', (template, path, params) => {
    const match = compileTemplate(template).exec(path);
    expect(match && match.slice(1)).toEqual(params);
  });

  it('writes greedy parameters as OpenAPI does', () => {
    expect(openApiPath('/v1/sites/{name}/files/{path...}')).toBe('/v1/sites/{name}/files/{path}');
  });
});

describe('the router of every host', () => {
  const router = createRouter<string>();
  router.add('GET', '/sites/{name}', 'show');
  router.add('POST', '/sites/{name}', 'change');
  router.add('DELETE', '/sites/{name}', 'delete');
  router.add('GET', '/files/{path...}', 'file');

  it.each([
    ['GET', '/sites/a', { kind: 'found', handler: 'show', params: ['a'] }],
    ['HEAD', '/sites/a', { kind: 'found', handler: 'show', params: ['a'] }],
    ['POST', '/sites/a/', { kind: 'found', handler: 'change', params: ['a'] }],
    ['GET', '/sites/a%40b', { kind: 'found', handler: 'show', params: ['a@b'] }],
    ['GET', '/files/css/a%20b.css', { kind: 'found', handler: 'file', params: ['css/a b.css'] }],
    ['PUT', '/sites/a', { kind: 'method_not_allowed', allowed: ['GET', 'POST', 'DELETE'] }],
    ['POST', '/files/a', { kind: 'method_not_allowed', allowed: ['GET'] }],
    ['GET', '/sites/%E0%A4%A', { kind: 'bad_encoding' }],
    ['GET', '/files/%zz', { kind: 'bad_encoding' }],
    ['GET', '/nowhere', { kind: 'not_found' }],
    ['GET', '/sites/a/b', { kind: 'not_found' }],
  ])('%s %s → %j', (method, path, expected) => {
    expect(router.match(method, path)).toEqual(expected);
  });
});
