import { describe, expect, it } from 'vitest';
import { compileTemplate, openApiPath } from '../../src/api/router.js';

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
