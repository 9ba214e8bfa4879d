import { describe, expect, it } from 'vitest';
import { routeGroup, type GroupRoute } from '../../src/api/routes/group.js';
import { pathParam } from '../../src/api/route.js';

/** A route of a group declares only what is its own; the group adds the rest, in a fixed order. */

const site = pathParam('name', 'Site name.');
const page = { name: 'limit', in: 'query' };
const own: GroupRoute = {
  method: 'GET',
  path: '/v1/sites/{name}/things',
  operationId: 'listThings',
  summary: 'Things',
  responses: {},
  handle: async () => undefined,
};

describe('routeGroup', () => {
  it.each([
    ['a group with parameters and errors, a route with neither', { parameters: [site], errors: ['not_found'] as const }, {}, [site], ['not_found']],
    [
      'the group first among parameters, last among errors',
      { parameters: [site], errors: ['not_found'] as const },
      { parameters: [page], errors: ['conflict'] as const },
      [site, page],
      ['conflict', 'not_found'],
    ],
    ['a route with parameters in a group without', {}, { parameters: [page], errors: ['conflict'] as const }, [page], ['conflict']],
    ['neither with parameters', {}, {}, undefined, []],
  ])('%s', (_what, group, route, parameters, errors) => {
    const made = routeGroup({ tag: 'Sites', auth: ['api'], ...group })({ ...own, ...route });
    expect(made).toMatchObject({ tag: 'Sites', auth: ['api'], operationId: 'listThings', errors });
    expect(made.parameters).toEqual(parameters);
    expect('parameters' in made).toBe(parameters !== undefined);
  });
});
