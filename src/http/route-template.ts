/**
 * Path templates shared by the routers of every host: `{name}` is one segment, `{path...}` (last
 * only) the rest of the path.
 */

/** The template as OpenAPI writes it (`{path...}` → `{path}`). */
export function openApiPath(template: string): string {
  return template.replace(/\{(\w+)\.\.\.\}/g, '{$1}');
}

/** Anchored pattern for a template; a trailing slash is allowed. Parameters become capture groups. */
export function compileTemplate(template: string): RegExp {
  const source = template
    .split(/(\{\w+(?:\.\.\.)?\})/)
    .map((part) => {
      if (/^\{\w+\.\.\.\}$/.test(part)) return '(.+)';
      if (/^\{\w+\}$/.test(part)) return '([^/]+)';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return template.includes('...}') ? new RegExp(`^${source}$`) : new RegExp(`^${source}/?$`);
}
