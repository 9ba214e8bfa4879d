import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, openApiDocument } from '../../src/api/index.js';
import { openApiPath } from '../../src/http/index.js';
import { loadConfig } from '../../src/config.js';
import { ERROR_STATUS } from '../../src/errors.js';

const config = loadConfig({ PLINTH_PORT: '8080' });
const document = openApiDocument(config) as Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every route the router serves, and no route it does not', () => {
    const routed = API_ROUTES.map((route) => `${route.method} ${openApiPath(route.path)}`).sort();
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    expect(documented).toEqual(routed);
  });

  it('declares every path parameter of each template, and only those', () => {
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const method of Object.keys(item)) {
        const declared = (item[method].parameters ?? [])
          .filter((p: any) => p.in === 'path')
          .map((p: any) => p.name)
          .sort();
        expect(declared, `${method} ${path}`).toEqual(inPath);
      }
    }
  });

  it('gives every operation an id, security, a success answer and the error shape for every error', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.operationId, `${method} ${path}`).toBeTypeOf('string');
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
        expect(operation.security, `${method} ${path}`).toBeInstanceOf(Array);
        const statuses = Object.keys(operation.responses);
        expect(
          statuses.some((status) => status.startsWith('2')),
          `${method} ${path}`,
        ).toBe(true);
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          expect(operation.responses[status].$ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/responses\//);
        }
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['429', '500']));
      }
    }
  });

  it('documents Idempotent-Replayed on every success answer of the operations that take Idempotency-Key, and nowhere else', () => {
    const keyed: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const takesKey = (operation.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
        if (takesKey) keyed.push(`${method.toUpperCase()} ${path}`);
        for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
          if (!status.startsWith('2')) continue;
          const header = response.headers?.['Idempotent-Replayed'];
          if (!takesKey) expect(header, `${method} ${path} ${status}`).toBeUndefined();
          else expect(header?.schema, `${method} ${path} ${status}`).toEqual({ type: 'string', const: 'true' });
        }
      }
    }
    expect(keyed.sort()).toEqual(['POST /v1/deploy', 'POST /v1/deploy/manifest']);
  });

  it('spells the error codes as the catalogue does', () => {
    expect(document.components.schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(ERROR_STATUS));
  });

  it('describes the site and API tokens as bearer schemes, and uses the configured API address', () => {
    expect(document.components.securitySchemes.siteToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.apiToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.servers).toEqual([{ url: 'http://api.localhost:8080' }]);
  });
});
