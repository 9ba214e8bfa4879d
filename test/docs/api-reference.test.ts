import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/index.js';
import { GUIDE_DIR } from '../../src/docs/index.js';

/**
 * docs/sites-api.md (and docs/publishing.md for the deploy routes) is the prose home of the REST
 * routes the route table declares: each route is written there as `METHOD /v1/…`, with
 * parameters as `<name>`, and no guide names a call the table does not have.
 */

const guide = (file: string): string => readFileSync(new URL(file, GUIDE_DIR), 'utf8');
/** `/v1/sites/{name}/files/{path...}` as the guides write it: `/v1/sites/<name>/files/<path>`. */
const written = (path: string): string => path.replace(/\{(\w+)(?:\.\.\.)?\}/g, '<$1>');
/** Every `METHOD /v1/…` a guide names in code, its parameters as `<x>` whether written `<x>` or `:x`, without a query. */
const namedCalls = (markdown: string): string[] =>
  [...markdown.matchAll(/`(GET|POST|PUT|DELETE|PATCH|HEAD) (\/v1\/[^`\s?]*)[^`]*`/g)].map(
    (m) => `${m[1]} ${m[2]!.replace(/:(\w+)/g, '<$1>').replace(/\/$/, '')}`,
  );

describe('the API reference in the guides', () => {
  it.each(API_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))('%s is documented in its guide', (_name, route) => {
    const home = route.tag === 'Deploy' ? 'publishing.md' : 'sites-api.md';
    expect(namedCalls(guide(home)), home).toContain(`${route.method} ${written(route.path)}`);
  });

  it('names no call the route table does not have, in any guide', () => {
    const routes = new Set(API_ROUTES.map((route) => `${route.method} ${written(route.path)}`));
    const files = readdirSync(GUIDE_DIR).filter((file) => file.endsWith('.md'));
    expect(files).toContain('sites-api.md');
    for (const file of files) {
      for (const call of namedCalls(guide(file))) expect(routes, `${file}: ${call}`).toContain(call);
    }
  });
});
