/**
 * The operations' messages name REST calls (`GET /v1/sites/<name>/files`); an MCP client has
 * tools instead. Each REST call that has a tool is rewritten as that tool with its arguments, so
 * an agent on MCP is told what it can call. Text that names the REST API on purpose ("… on the
 * REST API") is left alone.
 */

const NAME = '([^/\\s"\'`,;)]+)';
/** Like NAME, but stops before a sentence's full stop (ids may not end in one). */
const ID = '([^/\\s"\'`,;)]+?)';
const NOT_REST = '(?! on the REST API)';
const END = '(?=[\\s,;)"\'`]|\\.(?:\\s|$)|$)';

const args = (pairs: Record<string, string>): string =>
  `{${Object.entries(pairs)
    .map(([key, value]) => `"${key}": "${value}"`)
    .join(', ')}}`;

const RULES: ReadonlyArray<[RegExp, (...groups: string[]) => string]> = [
  [new RegExp(`GET /v1/sites/${NAME}/files/(\\S+?)${END}${NOT_REST}`, 'g'), (site, path) => `read_file ${args({ site: site!, path: path! })}`],
  [new RegExp(`GET /v1/sites/${NAME}/files${END}${NOT_REST}`, 'g'), (site) => `list_files ${args({ site: site! })}`],
  [new RegExp(`GET /v1/sites/${NAME}/revisions${END}`, 'g'), (site) => `list_revisions ${args({ site: site! })}`],
  [new RegExp(`GET /v1/sites/${NAME}/members${END}`, 'g'), (site) => `list_members ${args({ site: site! })}`],
  // A call shown with its JSON body: the body's fields join the tool's arguments.
  [new RegExp(`POST /v1/sites/${NAME}/(rollback|promote) \\{([^{}]*)\\}`, 'g'), (site, action, body) => `${action}_site {"site": "${site!}", ${body!.trim()}}`],
  [new RegExp(`POST /v1/sites/${NAME}/rollback${END}`, 'g'), (site) => `rollback_site ${args({ site: site! })}`],
  [new RegExp(`POST /v1/sites/${NAME}/promote${END}`, 'g'), (site) => `promote_site ${args({ site: site! })}`],
  [new RegExp(`GET /v1/deploy/manifest/${NAME}${END}`, 'g'), (id) => `get_deploy ${args({ manifest: id! })}`],
  [new RegExp(`POST /v1/deploy/manifest${END}`, 'g'), () => 'start_deploy'],
  [/ and an empty body/g, () => ' and no files'],
  [new RegExp(`POST /v1/deploy\\?manifest=${NAME}${END}`, 'g'), (id) => `deploy_site ${args({ manifest: id! })}`],
  [
    new RegExp(`DELETE /v1/sites/${NAME}/members/${NAME}${END}`, 'g'),
    (site, email) => `remove_member ${args({ site: site!, email: decodeURIComponent(email!) })}`,
  ],
  [new RegExp(`DELETE /v1/sites/${NAME}/revisions/${ID}${END}`, 'g'), (site, revision) => `delete_revision ${args({ site: site!, revision: revision! })}`],
  [new RegExp(`(GET|PUT) /v1/sites/${NAME}/access${END}`, 'g'), (method, site) => `${method === 'GET' ? 'get' : 'set'}_access ${args({ site: site! })}`],
  [new RegExp(`DELETE /v1/sites/${NAME}${END}`, 'g'), (site) => `delete_site ${args({ site: site! })}`],
  [new RegExp(`GET /v1/sites/${NAME}${END}`, 'g'), (site) => `get_site ${args({ site: site! })}`],
  [new RegExp(`GET /v1/sites${END}`, 'g'), () => 'list_sites'],
  [new RegExp(`GET /v1/me${END}`, 'g'), () => 'get_account'],
  [new RegExp(`POST /v1/deploy${END}`, 'g'), () => 'deploy_site'],
  // No tool reads an approval: its page (approve_url) says whether the site was deleted.
  [new RegExp(` \\(so does GET /v1/approvals/${NAME}\\)`, 'g'), () => ''],
  [/without \?confirm/g, () => 'without "confirm"'],
  [/the X-Base-Revision header \(archives\) or "base_revision" \(JSON\)/g, () => '"base_revision"'],
  [/\bas X-Base-Revision\b/g, () => 'as "base_revision"'],
];

export function inToolWords(text: string): string {
  let out = text;
  for (const [pattern, replace] of RULES)
    out = out.replace(pattern, (_whole, ...groups: unknown[]) => replace(...(groups.filter((g) => typeof g === 'string') as string[])));
  return out;
}
