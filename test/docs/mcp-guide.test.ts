import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toolSpecs } from '../../src/mcp/tools.js';

/** The MCP guide's tool table against the tools the server serves, both ways. */

const guide = readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
const documented = [...guide.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);

describe('MCP guide', () => {
  it('lists every tool the server serves, and no other', () => {
    expect(documented.length).toBeGreaterThan(0);
    expect([...documented].sort()).toEqual(
      toolSpecs()
        .map((tool) => tool.name)
        .sort(),
    );
  });

  it("states each tool's annotations in the Hints column", () => {
    const hints = new Map([...guide.matchAll(/^\| `([a-z_]+)` \|.*\| ([^|]+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
    for (const tool of toolSpecs()) {
      const { readOnlyHint, destructiveHint } = tool.annotations;
      expect(hints.get(tool.name), tool.name).toBe(readOnlyHint ? 'read-only' : destructiveHint ? 'destructive' : '—');
      expect(tool.annotations.idempotentHint, `${tool.name}: idempotent exactly when read-only`).toBe(readOnlyHint);
      expect(tool.annotations.openWorldHint, tool.name).toBe(false);
    }
  });

  it('names the REST twin of each tool as a route the API has', async () => {
    const { API_ROUTES } = await import('../../src/api/index.js');
    const routes = new Set(
      API_ROUTES.map(
        (route) => `${route.method} ${route.path.replace(/\{(\w+)(\.\.\.)?\}/g, (_m, name: string, rest?: string) => (rest ? '<path>' : `:${name}`))}`,
      ),
    );
    for (const [, twin] of guide.matchAll(/^\| `[a-z_]+` \| [^|]+ \| `([A-Z]+ [^`]+)` \|/gm)) {
      expect(routes, twin).toContain(twin);
    }
  });
});
