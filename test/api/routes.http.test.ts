import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, routeErrors, type ApiRoute } from '../../src/api/index.js';
import { answer, pathParam } from '../../src/api/route.js';
import { ERROR_MEANING, ERROR_STATUS, RECORDS_UNAVAILABLE_CODE, ServiceError } from '../../src/errors.js';
import { openApiPath } from '../../src/http/index.js';
import { schema } from '../../src/contract/index.js';
import { request } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';
import { accountWithToken, api } from './api-helpers.js';

/**
 * A REST route is one declaration: a server given the table with one more route serves it, and
 * its docs host documents it at /openapi.json with the errors it declares, as it does every
 * route of the table.
 */

const echo: ApiRoute = {
  method: 'GET',
  path: '/v1/echo/{word}',
  operationId: 'echoWord',
  summary: 'Answer a word back',
  tag: 'Account',
  auth: ['none'],
  parameters: [pathParam('word', 'Any word; `gone` is answered 410.')],
  responses: { 200: answer(schema.object({ word: schema.str() }, ['word']), 'The word.') },
  errors: ['gone'],
  handle: async ({ request }) => {
    if (request.params[0] === 'gone') throw new ServiceError('gone', 'That word is gone.');
    // What lies under an operation failing: a full disk, a cluster's records database down.
    if (request.params[0] === 'full') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    if (request.params[0] === 'down') throw Object.assign(new Error('no answer from PostgreSQL'), { code: RECORDS_UNAVAILABLE_CODE });
    return { status: 200, body: { word: request.params[0] } };
  },
};
const TABLE = [...API_ROUTES, echo];

const server = useTestServer({}, { apiRoutes: TABLE });
let document: Record<string, any>;

beforeAll(async () => {
  const res = await request({ port: server.port, host: 'localhost', path: '/openapi.json' });
  expect(res.status).toBe(200);
  document = JSON.parse(res.text);
});

const statuses = (codes: readonly string[]): string[] => codes.map((code) => String(ERROR_STATUS[code as keyof typeof ERROR_STATUS])).sort();
const documentedErrors = (route: ApiRoute): string[] =>
  Object.keys(document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()]?.responses ?? {})
    .filter((status) => Number(status) >= 400)
    .sort();
/** A path the route's template matches: every parameter filled in. */
const samplePath = (route: ApiRoute): string => route.path.replace(/\{(\w+)\.\.\.\}/, 'index.html').replace(/\{\w+\}/g, 'x');

describe('the route table', () => {
  it('serves a route added as one declaration, and documents it with its errors', async () => {
    const hello = await api(server, { path: '/v1/echo/hello' });
    expect(hello.status).toBe(200);
    expect(hello.json).toEqual({ word: 'hello' });

    const gone = await api(server, { path: '/v1/echo/gone' });
    expect(gone.status).toBe(410);
    expect(gone.json.error.code).toBe('gone');

    const posted = await api(server, { method: 'POST', path: '/v1/echo/hello' });
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET');

    const operation = document.paths['/v1/echo/{word}'].get;
    expect(operation.operationId).toBe('echoWord');
    expect(operation.tags).toEqual(['Account']);
    expect(operation.security).toEqual([{}]);
    expect(documentedErrors(echo)).toEqual(['401', '410', '429', '500', '503']);
    expect(operation.responses['410']).toEqual({ $ref: '#/components/responses/Gone' });
  });

  it('documents on every route the 503 any of them answers when what lies under it fails (a full disk, a database or bucket down)', async () => {
    for (const [word, reason] of [
      ['full', 'storage_full'],
      ['down', 'records_unavailable'],
    ] as const) {
      const res = await api(server, { path: `/v1/echo/${word}` });
      expect(res.status, word).toBe(503);
      expect(res.json.error.code).toBe('unavailable');
      expect(res.json.error.details.reason).toBe(reason);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    for (const route of TABLE) expect(documentedErrors(route), `${route.method} ${route.path}`).toContain('503');
  });

  it.each(TABLE.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s is served, and documented with the errors its declaration lists (and those of the edge)',
    async (_name, route) => {
      expect(documentedErrors(route)).toEqual(statuses(routeErrors(route)));
      // Without a credential every route answers, and with an error it documents.
      const res = await api(server, { method: route.method, path: samplePath(route) });
      expect(res.json?.error?.code, res.text).not.toBe('method_not_allowed');
      expect(res.json?.error?.message ?? '', res.text).not.toMatch(/^No endpoint/);
      if (res.status >= 400) expect(documentedErrors(route), res.text).toContain(String(res.status));
    },
  );

  it.each(TABLE.filter((route) => route.body !== undefined && route.path !== '/v1/deploy').map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s refuses a body that is not JSON with a 400 it documents',
    async (_name, route) => {
      const { token } = await accountWithToken(server.store);
      const res = await api(server, {
        method: route.method,
        path: samplePath(route),
        token,
        raw: '{not json',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).toBe(400);
      expect(documentedErrors(route)).toContain('400');
    },
  );

  it('documents no route the table does not declare', () => {
    const declared = TABLE.map((route) => `${route.method} ${openApiPath(route.path)}`).sort();
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(declared);
  });

  it('describes each error as the catalogue does, and only the errors some route answers', () => {
    const answered = new Set(TABLE.flatMap(routeErrors));
    const responses = document.components.responses as Record<string, { description: string }>;
    expect(Object.keys(responses)).toHaveLength(answered.size);
    for (const code of answered) {
      const name = code.replace(/(^|_)([a-z])/g, (_m, _sep: string, letter: string) => letter.toUpperCase());
      expect(responses[name]?.description, code).toBe(`\`${code}\`: ${ERROR_MEANING[code]}.`);
    }
  });
});
