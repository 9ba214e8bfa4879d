import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/index.js';
import { toolSpecs } from '../../src/mcp/tools.js';
import { BODIES, SHAPES } from '../../src/contract/index.js';

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

  it.each([
    ['set_access', 'PUT', '/v1/sites/{name}/access', BODIES.SiteAccessChange],
    ['rollback_site', 'POST', '/v1/sites/{name}/rollback', BODIES.Rollback],
    ['promote_site', 'POST', '/v1/sites/{name}/promote', BODIES.Promote],
    ['rename_site', 'POST', '/v1/sites/{name}/rename', BODIES.Rename],
    ['invite_member', 'POST', '/v1/sites/{name}/members', BODIES.Invite],
    ['add_domain', 'POST', '/v1/sites/{name}/domains', BODIES.AddDomain],
  ])("%s takes the fields of %s %s's body shape, beside the site", (name, method, path, shape) => {
    type ObjectSchema = { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    const body = route(method, path).body!.schema as ObjectSchema;
    expect(body).toBe(shape);
    const input = tool(name).inputSchema as ObjectSchema;
    const { site, ...fields } = input.properties;
    expect(site).toBeDefined();
    expect(Object.keys(fields)).toEqual(Object.keys(body.properties));
    for (const [field, schema] of Object.entries(fields)) expect(schema, field).toBe(body.properties[field]);
    expect(input.required).toEqual(['site', ...body.required]);
    expect(input.additionalProperties).toBe(false);
  });
});
