import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/index.js';
import { toolSpecs } from '../../src/mcp/tools.js';
import { SHAPES } from '../../src/contract/index.js';

/** A tool and the REST route that call the same operation read the same shape, not a copy of it. */

const route = (method: string, path: string) => API_ROUTES.find((r) => r.method === method && r.path === path)!;
const tool = (name: string) => toolSpecs().find((spec) => spec.name === name)!;
/** The component a `{ $ref }` names, e.g. `#/components/schemas/JsonDeploy`. */
const component = (ref: unknown) =>
  SHAPES[
    String((ref as { $ref: string }).$ref)
      .split('/')
      .pop() as keyof typeof SHAPES
  ];

describe('MCP tools and REST routes', () => {
  it('take the same JSON deploy and manifest bodies', () => {
    expect(tool('deploy_site').inputSchema).toBe(component(route('POST', '/v1/deploy').body!.content!['application/json']!.schema));
    expect(tool('start_deploy').inputSchema).toBe(component(route('POST', '/v1/deploy/manifest').body!.schema));
  });

  it("set_access takes the fields of PUT /v1/sites/{name}/access's body, beside the site", () => {
    const body = route('PUT', '/v1/sites/{name}/access').body!.schema as { properties: Record<string, unknown> };
    const { site, ...fields } = (tool('set_access').inputSchema as { properties: Record<string, unknown> }).properties;
    expect(site).toBeDefined();
    expect(Object.keys(fields)).toEqual(Object.keys(body.properties));
    for (const [name, field] of Object.entries(fields)) expect(field, name).toBe(body.properties[name]);
  });
});
