import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, unique, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { connectClient, textOf } from './mcp-helpers.js';

/**
 * The tools whose REST twin takes a body read the same shape (contract/bodies.ts) and check it the
 * same way: over a real server, every row goes once to the REST route and once to the tool, each
 * on a fresh site, and both must accept it or both refuse it with the same code and words.
 */

const server = useTestServer();
let owner: TestAccount;
let client: Client;

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'team');
  client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, owner.token);
});

afterAll(async () => {
  await client?.close();
});

type Site = { name: string; revision: string };
type Fields = (site: Site) => Record<string, unknown>;

/** A tool, and its REST twin: method, path below the site, and the status of success. */
const TWINS = {
  rollback_site: { method: 'POST', path: 'rollback', ok: 201 },
  promote_site: { method: 'POST', path: 'promote', ok: 200 },
  rename_site: { method: 'POST', path: 'rename', ok: 200 },
  invite_member: { method: 'POST', path: 'members', ok: 201 },
  add_domain: { method: 'POST', path: 'domains', ok: 201 },
} as const;
type Tool = keyof typeof TWINS;

const domain = () => `${unique('parity')}.example.org`;
const email = () => `${unique('invited')}@example.com`;

/** Tool, what the row sends, the fields beside `site`, and the outcome both edges must give. */
const ROWS: ReadonlyArray<[Tool, string, Fields, 'accepted' | string]> = [
  ['rollback_site', 'a revision of the site', (s) => ({ revision: s.revision }), 'accepted'],
  ['rollback_site', 'no revision', () => ({}), 'bad_request'],
  ['rollback_site', 'an empty revision', () => ({ revision: '' }), 'bad_request'],
  ['rollback_site', 'a number for a revision', () => ({ revision: 1 }), 'bad_request'],
  ['rollback_site', 'a revision that is no revision id', () => ({ revision: 'latest' }), 'bad_request'],
  ['rollback_site', 'an unknown revision id', () => ({ revision: 'rev_doesnotexist' }), 'not_found'],
  ['rollback_site', 'an unknown field', (s) => ({ revision: s.revision, reason: 'typo' }), 'bad_request'],
  ['promote_site', 'the live revision onto itself', (s) => ({ revision: s.revision, base_revision: s.revision }), 'accepted'],
  ['promote_site', 'no base revision', (s) => ({ revision: s.revision }), 'bad_request'],
  ['promote_site', 'a base that is no revision id', (s) => ({ revision: s.revision, base_revision: 'live' }), 'bad_request'],
  ['promote_site', 'a stale base revision', (s) => ({ revision: s.revision, base_revision: 'rev_stale' }), 'conflict'],
  ['promote_site', 'an unknown field', (s) => ({ revision: s.revision, base_revision: s.revision, force: true }), 'bad_request'],
  ['rename_site', 'a free name', () => ({ name: unique('renamed-') }), 'accepted'],
  ['rename_site', 'no name', () => ({}), 'bad_request'],
  ['rename_site', 'a name of 3 characters', () => ({ name: 'abc' }), 'bad_request'],
  ['rename_site', 'a name of 64 characters', () => ({ name: 'a'.repeat(64) }), 'bad_request'],
  ['rename_site', 'a name in upper case', () => ({ name: 'My-Site' }), 'bad_request'],
  ['rename_site', 'a number for a name', () => ({ name: 1234 }), 'bad_request'],
  ['rename_site', 'a reserved name', () => ({ name: 'admin' }), 'bad_request'],
  ['rename_site', 'an unknown field', () => ({ name: unique('renamed-'), redirect: false }), 'bad_request'],
  ['invite_member', 'an address and a role', () => ({ email: email(), role: 'viewer' }), 'accepted'],
  ['invite_member', 'no role', () => ({ email: email() }), 'bad_request'],
  ['invite_member', 'the owner role', () => ({ email: email(), role: 'owner' }), 'bad_request'],
  ['invite_member', 'a bad address', () => ({ email: 'not-an-address', role: 'viewer' }), 'bad_request'],
  ['invite_member', 'a short bad address', () => ({ email: 'a@', role: 'viewer' }), 'bad_request'],
  ['invite_member', 'a header injection', () => ({ email: 'x@example.com\r\nBcc: y@example.com', role: 'viewer' }), 'bad_request'],
  ['invite_member', 'an unknown field', () => ({ email: email(), role: 'viewer', message: 'hello' }), 'bad_request'],
  ['add_domain', 'a domain', () => ({ domain: domain() }), 'accepted'],
  ['add_domain', 'a domain made primary', () => ({ domain: domain(), primary: true, redirect_site_address: true }), 'accepted'],
  ['add_domain', 'a domain in upper case with a trailing dot', () => ({ domain: `${domain().toUpperCase()}.` }), 'accepted'],
  ['add_domain', 'no domain', () => ({}), 'bad_request'],
  ['add_domain', 'an IP address', () => ({ domain: '192.0.2.1' }), 'bad_request'],
  ['add_domain', 'a domain of 300 characters', () => ({ domain: `${'a'.repeat(63)}.`.repeat(4) + 'a'.repeat(44) }), 'bad_request'],
  ['add_domain', 'a text for primary', () => ({ domain: domain(), primary: 'yes' }), 'bad_request'],
  ['add_domain', 'an unknown field', () => ({ domain: domain(), verify: true }), 'bad_request'],
];

interface Outcome {
  code: string;
  /** The refusal's message, with the site's name in place of `<site>`. */
  message?: string;
}

async function overRest(tool: Tool, fields: Fields): Promise<Outcome> {
  const site = await accountSite(server.store, owner);
  const twin = TWINS[tool];
  const res = await api(server, { method: twin.method, path: `/v1/sites/${site.name}/${twin.path}`, token: owner.token, body: fields(site) });
  // A rollback to what is live already answers 200 (`unchanged`), not 201.
  if (res.status === twin.ok || (res.status === 200 && twin.ok === 201)) return { code: 'accepted' };
  return { code: res.json.error.code, message: res.json.error.message.replaceAll(site.name, '<site>') };
}

async function overMcp(tool: Tool, fields: Fields): Promise<Outcome> {
  const site = await accountSite(server.store, owner);
  const result = (await client.callTool({ name: tool, arguments: { site: site.name, ...fields(site) } })) as CallToolResult;
  if (!result.isError) return { code: 'accepted' };
  // `code: message` on the first line; a refusal of the arguments' shape names the tool first.
  const [, code, message] = new RegExp(`^(\\w+): (?:${tool}: )?(.*)$`, 'm').exec(textOf(result))!;
  return { code: code!, message: message!.replaceAll(site.name, '<site>') };
}

describe('a tool and its REST route accept and refuse the same bodies', () => {
  it('has rows for every tool whose REST twin takes a body on one site', () => {
    expect(new Set(ROWS.map(([tool]) => tool))).toEqual(new Set(Object.keys(TWINS)));
  });

  it.each(ROWS.map(([tool, what, fields, outcome]) => [tool, what, outcome, fields] as const))(
    '%s with %s: %s on both',
    async (tool, _what, outcome, fields) => {
      const rest = await overRest(tool, fields);
      const mcp = await overMcp(tool, fields);
      expect(rest.code).toBe(outcome);
      expect(mcp).toEqual(rest);
    },
  );
});
