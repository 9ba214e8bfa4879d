import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { request } from '../helpers/http.js';
import { connectClient, structured, textOf } from './mcp-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Every tool through the MCP SDK's own client over streamable HTTP, with an API token, against the
 * real server: the same operations, checks and ingest pool as the REST API.
 */

let owner: TestAccount;
let client: Client;
let mcpUrl: string;
const MB = 1024 * 1024;

const server = useAppServer();

beforeAll(async () => {
  mcpUrl = `http://mcp.localhost:${server.port}/mcp`;
  owner = await accountWithToken(server.store, 'builder');
  client = await connectClient(mcpUrl, owner.token);
});

afterAll(async () => {
  await client?.close();
});

const page = (title: string): string => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;

async function deploy(args: Record<string, unknown>, as = client) {
  return as.callTool({ name: 'deploy_site', arguments: args });
}

describe('tool listing', () => {
  it('lists every tool with a title, description, schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'delete_revision',
        'delete_site',
        'deploy_site',
        'get_access',
        'get_account',
        'get_deploy',
        'get_site',
        'invite_member',
        'list_files',
        'list_members',
        'list_revisions',
        'list_site_events',
        'list_sites',
        'get_site_analytics',
        'new_claim_link',
        'promote_site',
        'read_file',
        'remove_member',
        'rename_site',
        'rollback_site',
        'list_domains',
        'add_domain',
        'verify_domain',
        'remove_domain',
        'set_access',
        'start_deploy',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations).toMatchObject({ openWorldHint: false });
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
      expect(typeof tool.annotations?.idempotentHint).toBe('boolean');
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('list_files')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(byName.get('deploy_site')!.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.get('remove_member')!.annotations).toMatchObject({ destructiveHint: true });
  });

  it('reports the server and its protocol revision', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'plinth' });
    expect(client.getInstructions()).toContain('deploy_site');
  });
});

describe('sites through MCP', () => {
  let name: string;
  let first: string;

  it('deploys a new site into the account and returns the same JSON as text', async () => {
    const result = await deploy({
      files: [
        { path: 'index.html', content: page('Home') },
        { path: 'about.html', content: page('About') },
        { path: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString('base64'), encoding: 'base64' },
      ],
    });
    const view = structured<{
      site: { name: string; url: string; claimed: boolean };
      revision: { id: string; number: number; files: number };
      agent_message: string;
    }>(result);
    expect(view.site.claimed).toBe(true);
    expect(view.revision).toMatchObject({ number: 1, files: 3 });
    expect(JSON.parse(textOf(result))).toEqual(view);
    name = view.site.name;
    first = view.revision.id;
  });

  it('answers a deploy with the link check, and refuses a bad _redirects line with its details', async () => {
    // An account of its own: the site listing below counts this account's sites.
    const other = await connectClient(mcpUrl, (await accountWithToken(server.store, 'builder')).token);
    const checked = structured<{ warnings: Array<{ file: string; line: number; ref: string }>; warnings_total: number }>(
      await deploy({ files: [{ path: 'index.html', content: '<h1>x</h1>\n<img src="missing.png">' }] }, other),
    );
    expect(checked.warnings).toEqual([{ file: 'index.html', line: 2, ref: 'missing.png', kind: 'broken_link' }]);
    expect(checked.warnings_total).toBe(1);
    const refused = await deploy(
      {
        files: [
          { path: 'index.html', content: '<h1>x</h1>' },
          { path: '_redirects', content: '/api/* https://api.example.com/:splat 200' },
        ],
      },
      other,
    );
    await other.close();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('bad_request: _redirects line 1 is refused (proxy_not_supported).');
    expect(textOf(refused)).toContain('_redirects line 1 reads "/api/* https://api.example.com/:splat 200": Plinth does not proxy');
    expect(textOf(refused)).toContain(
      'Details: {"file":"_redirects","line":1,"reason":"proxy_not_supported","lines":[{"file":"_redirects","line":1,"reason":"proxy_not_supported"}]}',
    );
  });

  it('reads the account, the site list and the site', async () => {
    expect(structured(await client.callTool({ name: 'get_account', arguments: {} }))).toMatchObject({
      email: owner.account.email,
      plan: 'builder',
      sites_used: 1,
    });
    const list = structured<{ sites: Array<{ name: string }>; next_cursor: string | null }>(
      await client.callTool({ name: 'list_sites', arguments: { limit: 10 } }),
    );
    expect(list.sites.map((site) => site.name)).toContain(name);
    expect(structured(await client.callTool({ name: 'get_site', arguments: { site: name } }))).toMatchObject({
      name,
      role: 'owner',
      live_revision: { id: first, number: 1 },
    });
  });

  it('lists and reads files, text as utf8 and binary as base64', async () => {
    const files = structured<{ revision: string; files: Array<{ path: string }> }>(await client.callTool({ name: 'list_files', arguments: { site: name } }));
    expect(files.revision).toBe(first);
    expect(files.files.map((file) => file.path)).toEqual(['about.html', 'index.html', 'logo.png']);
    expect(structured(await client.callTool({ name: 'read_file', arguments: { site: name, path: 'about.html' } }))).toMatchObject({
      encoding: 'utf8',
      content: page('About'),
      revision: first,
    });
    expect(structured(await client.callTool({ name: 'read_file', arguments: { site: name, path: 'logo.png' } }))).toMatchObject({
      encoding: 'base64',
      content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString('base64'),
    });
    const missing = await client.callTool({ name: 'read_file', arguments: { site: name, path: 'nope.html' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^not_found: /);
    expect(textOf(missing)).toContain(`list_files {"site": "${name}"}`);
    expect(textOf(missing)).not.toContain('/v1/');
  });

  it('applies a patch deploy on top of the live revision', async () => {
    const result = await deploy({
      site: name,
      base_revision: first,
      patch: true,
      files: [{ path: 'contact.html', content: page('Contact') }],
      deleted: ['about.html'],
    });
    const view = structured<{ revision: { id: string; number: number; files: number } }>(result);
    expect(view.revision).toMatchObject({ number: 2, files: 3 });
    const files = structured<{ files: Array<{ path: string }> }>(await client.callTool({ name: 'list_files', arguments: { site: name } }));
    expect(files.files.map((file) => file.path)).toEqual(['contact.html', 'index.html', 'logo.png']);
    const revisions = structured<{ revisions: Array<{ number: number; kind: string }> }>(
      await client.callTool({ name: 'list_revisions', arguments: { site: name } }),
    );
    expect(revisions.revisions.map((revision) => [revision.number, revision.kind])).toEqual([
      [2, 'patch'],
      [1, 'deploy'],
    ]);
  });

  it('redeploys sending only what changed: unchanged files by sha256 and size from list_files', async () => {
    const created = structured<{ site: { name: string }; revision: { id: string } }>(
      await deploy({
        files: [
          { path: 'index.html', content: page('Digest') },
          { path: 'big.html', content: page('x'.repeat(50_000)) },
        ],
      }),
    );
    const listed = structured<{ files: Array<{ path: string; sha256: string; size: number }> }>(
      await client.callTool({ name: 'list_files', arguments: { site: created.site.name } }),
    );
    const unchanged = listed.files.filter((file) => file.path === 'big.html').map(({ path, sha256, size }) => ({ path, sha256, size }));
    const result = await deploy({
      site: created.site.name,
      base_revision: created.revision.id,
      files: [{ path: 'index.html', content: page('Digest v2') }, ...unchanged],
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const after = structured<{ files: Array<{ path: string; sha256: string }> }>(
      await client.callTool({ name: 'list_files', arguments: { site: created.site.name } }),
    );
    expect(after.files.find((file) => file.path === 'big.html')?.sha256).toBe(unchanged[0]!.sha256);
    // Content the site never had cannot be sent by reference.
    const missing = await deploy({
      site: created.site.name,
      base_revision: structured<{ revision: { id: string } }>(result).revision.id,
      files: [
        { path: 'index.html', content: 'x' },
        { path: 'other.html', sha256: 'c'.repeat(64), size: 10 },
      ],
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('other.html');
  });

  it('refuses a deploy on a stale base with the conflict and how to rebase', async () => {
    const result = await deploy({ site: name, base_revision: first, patch: true, files: [{ path: 'late.html', content: page('Late') }] });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^conflict: The site .* changed since the base revision/);
    expect(text).toContain(`list_files {"site": "${name}"}`);
    expect(text).toContain(`read_file {"site": "${name}", "path": "<path>"}`);
    expect(text).toContain('live_revision');
    // Over MCP the calls are tools, never REST requests.
    expect(text).not.toMatch(/\b(GET|POST|DELETE) \/v1\//);
  });

  it('refuses a file with a secret key, naming the file and line', async () => {
    const live = structured<{ live_revision: { id: string } }>(await client.callTool({ name: 'get_site', arguments: { site: name } }));
    const key = ['AKIA', 'Z7QW3ERT5YUI8OPL'].join('');
    const result = await deploy({
      site: name,
      base_revision: live.live_revision.id,
      patch: true,
      files: [{ path: 'js/config.js', content: `// settings\nconst region = "eu";\nconst id = "${key}";\n` }],
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^blocked_secret: /);
    expect(text).toContain('js/config.js');
    expect(text).toContain('line 3');
    expect(text).not.toContain(key);
  });

  it('refuses arguments that do not fit the input schema as a tool error', async () => {
    const result = await client.callTool({ name: 'rollback_site', arguments: { site: name } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^bad_request: rollback_site: .*revision/);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('rolls back and renames', async () => {
    const rolled = structured<{ revision: { number: number; kind: string; rollback_of: string } }>(
      await client.callTool({ name: 'rollback_site', arguments: { site: name, revision: first } }),
    );
    expect(rolled.revision).toMatchObject({ number: 3, kind: 'rollback', rollback_of: first });
    const files = structured<{ files: Array<{ path: string }> }>(await client.callTool({ name: 'list_files', arguments: { site: name } }));
    expect(files.files.map((file) => file.path)).toEqual(['about.html', 'index.html', 'logo.png']);

    const wanted = `mcp-renamed-${Date.now().toString(36)}`;
    const renamed = structured<{ site: { name: string }; previous_name: string }>(
      await client.callTool({ name: 'rename_site', arguments: { site: name, name: wanted } }),
    );
    expect(renamed).toMatchObject({ site: { name: wanted }, previous_name: name });
    name = wanted;
    // Too short for the body's shape (as on the REST API), then a name the operation refuses.
    const short = await client.callTool({ name: 'rename_site', arguments: { site: name, name: 'ab' } });
    expect(short.isError).toBe(true);
    expect(textOf(short)).toMatch(/^bad_request: rename_site: name must be at least 4 characters\./);
    const bad = await client.callTool({ name: 'rename_site', arguments: { site: name, name: 'My-Site' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^bad_request: Cannot rename/);
  });

  it('manages members: invite, list, two-step removal', async () => {
    const editor = await accountWithToken(server.store, 'free');
    const invited = structured<{ invite: { email: string; role: string } }>(
      await client.callTool({ name: 'invite_member', arguments: { site: name, email: editor.account.email, role: 'editor' } }),
    );
    expect(invited.invite).toMatchObject({ email: editor.account.email, role: 'editor' });
    const listed = structured<{ members: Array<{ email: string; role: string }>; invites: Array<{ email: string }> }>(
      await client.callTool({ name: 'list_members', arguments: { site: name } }),
    );
    expect(listed.members).toEqual([{ email: owner.account.email, role: 'owner' }]);
    expect(listed.invites.map((invite) => invite.email)).toEqual([editor.account.email]);

    // Make the person a member, as accepting the e-mailed invitation would.
    await server.store.setMember(server.store.getSite(name)!.id, editor.account.id, 'editor');
    const first = structured<{ confirm_token: string; member: { email: string } }>(
      await client.callTool({ name: 'remove_member', arguments: { site: name, email: editor.account.email } }),
    );
    expect(first.confirm_token).toMatch(/^rm_/);
    expect(server.store.getRole(server.store.getSite(name)!.id, editor.account.id)).toBe('editor');
    const wrong = await client.callTool({ name: 'remove_member', arguments: { site: name, email: editor.account.email, confirm: 'rm_wrong' } });
    expect(wrong.isError).toBe(true);
    const second = structured<{ removed: string }>(
      await client.callTool({ name: 'remove_member', arguments: { site: name, email: editor.account.email, confirm: first.confirm_token } }),
    );
    expect(second.removed).toBe(editor.account.email);
    expect(server.store.getRole(server.store.getSite(name)!.id, editor.account.id)).toBeUndefined();
  });

  it('asks for a deletion and returns the approval link; nothing is deleted', async () => {
    const result = structured<{ approve_url: string; approval: { status: string } }>(await client.callTool({ name: 'delete_site', arguments: { site: name } }));
    expect(result.approve_url.startsWith(`${server.appUrl}/approve/ap_`)).toBe(true);
    expect(result.approval.status).toBe('pending');
    expect(server.store.getSite(name)!.state).toBe('active');
  });

  it('holds a viewer to reading', async () => {
    const viewer = await accountWithToken(server.store, 'free');
    await server.store.setMember(server.store.getSite(name)!.id, viewer.account.id, 'viewer');
    const viewerClient = await connectClient(mcpUrl, viewer.token);
    try {
      expect(structured(await viewerClient.callTool({ name: 'get_site', arguments: { site: name } }))).toMatchObject({ role: 'viewer' });
      const refused = await deploy({ site: name, base_revision: 'rev_x', files: [{ path: 'index.html', content: 'x' }] }, viewerClient);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^forbidden: Your role on .* is viewer/);
    } finally {
      await viewerClient.close();
    }
  });
});

describe('drafts and access through MCP', () => {
  it('stores a draft, shows its preview, promotes it, and protects the site', async () => {
    const created = structured<{ site: { name: string }; revision: { id: string } }>(
      await deploy({ files: [{ path: 'index.html', content: page('Live one') }] }),
    );
    const name = created.site.name;
    const draft = structured<{ revision: { id: string; number: number; live: boolean; preview_url: string }; agent_message: string }>(
      await deploy({ site: name, base_revision: created.revision.id, publish: false, files: [{ path: 'index.html', content: page('Draft two') }] }),
    );
    expect(draft.revision).toMatchObject({ number: 2, live: false, preview_url: `http://2--${name}.sites.localhost:${server.port}` });
    // It names the tool to call, with its arguments, not the REST call.
    expect(draft.agent_message).toContain(`promote_site {"site": "${name}", "revision": "${draft.revision.id}", "base_revision": "${created.revision.id}"}`);
    expect(draft.agent_message).not.toMatch(/\/v1\//);
    const visit = (label: string, headers: Record<string, string> = {}) =>
      request({ port: server.port, host: `${label}.sites.localhost:${server.port}`, headers });
    expect((await visit(name)).text).toContain('Live one');
    expect((await visit(`2--${name}`)).text).toContain('Draft two');

    const listed = structured<{ revisions: Array<{ number: number; live: boolean; draft: boolean }> }>(
      await client.callTool({ name: 'list_revisions', arguments: { site: name } }),
    );
    expect(listed.revisions.map((r) => [r.number, r.live, r.draft])).toEqual([
      [2, false, true],
      [1, true, false],
    ]);
    const stale = await client.callTool({ name: 'promote_site', arguments: { site: name, revision: draft.revision.id, base_revision: draft.revision.id } });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^conflict: /);
    const promoted = structured<{ revision: { number: number; live: boolean } }>(
      await client.callTool({ name: 'promote_site', arguments: { site: name, revision: draft.revision.id, base_revision: created.revision.id } }),
    );
    expect(promoted.revision).toMatchObject({ number: 2, live: true });
    expect((await visit(name)).text).toContain('Draft two');

    expect(structured(await client.callTool({ name: 'get_access', arguments: { site: name } }))).toEqual({ access: { mode: 'public', previews: 'public' } });
    const set = structured<{ access: { mode: string } }>(await client.callTool({ name: 'set_access', arguments: { site: name, mode: 'members' } }));
    expect(set.access.mode).toBe('members');
    expect((await visit(name)).status).toBe(401);
    expect((await visit(name, { authorization: `Bearer ${owner.token}` })).text).toContain('Draft two');
    const short = await client.callTool({ name: 'set_access', arguments: { site: name, mode: 'password', password: 'short' } });
    expect(short.isError).toBe(true);
  });
});

describe('deleting revisions and keeping previews to members through MCP', () => {
  it('deletes a draft (never the live revision) and keeps previews to members with a preview link', async () => {
    const visit = (label: string, headers: Record<string, string> = {}, path = '/') =>
      request({ port: server.port, host: `${label}.sites.localhost:${server.port}`, headers, path });
    const created = structured<{ site: { name: string }; revision: { id: string } }>(await deploy({ files: [{ path: 'index.html', content: page('Live') }] }));
    const name = created.site.name;
    const draft = structured<{ revision: { id: string; number: number } }>(
      await deploy({ site: name, base_revision: created.revision.id, publish: false, files: [{ path: 'index.html', content: page('Mistake') }] }),
    );
    const live = await client.callTool({ name: 'delete_revision', arguments: { site: name, revision: created.revision.id } });
    expect(live.isError).toBe(true);
    expect(textOf(live)).toMatch(/^conflict: /);
    expect(textOf(live)).toContain(`rollback_site {"site": "${name}"}`);
    const deleted = structured<{ revision: { id: string; number: number }; deleted: true }>(
      await client.callTool({ name: 'delete_revision', arguments: { site: name, revision: draft.revision.id } }),
    );
    expect(deleted).toMatchObject({ revision: { id: draft.revision.id, number: 2 }, deleted: true });
    expect((await visit(`2--${name}`)).status).toBe(410);
    const listed = structured<{ revisions: Array<{ number: number }> }>(await client.callTool({ name: 'list_revisions', arguments: { site: name } }));
    expect(listed.revisions.map((r) => r.number)).toEqual([1]);

    const kept = structured<{ access: { mode: string; previews: string } }>(
      await client.callTool({ name: 'set_access', arguments: { site: name, previews: 'members' } }),
    );
    expect(kept.access).toEqual({ mode: 'public', previews: 'members' });
    expect((await visit(name)).status).toBe(200);
    expect((await visit(`1--${name}`)).status).toBe(401);
    const next = structured<{ revision: { preview_url: string } }>(
      await deploy({ site: name, base_revision: created.revision.id, publish: false, files: [{ path: 'index.html', content: page('Review me') }] }),
    );
    const link = new URL(next.revision.preview_url);
    expect(link.host).toBe(`3--${name}.sites.localhost:${server.port}`);
    expect(link.pathname).toBe('/.plinth/share');
    const exchanged = await visit(`3--${name}`, {}, `${link.pathname}${link.search}`);
    expect(exchanged.status).toBe(303);
    const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!;
    expect((await visit(`3--${name}`, { cookie })).text).toContain('Review me');
  });
});

describe('large deploys', () => {
  it('publishes a deploy of several MB (spooled, parsed by the ingest worker)', async () => {
    const big = Buffer.alloc(3 * MB, 7).toString('base64');
    const result = await deploy({
      files: [
        { path: 'index.html', content: page('Big') },
        { path: 'data.bin', content: big, encoding: 'base64' },
      ],
    });
    const view = structured<{ revision: { files: number; bytes: number } }>(result);
    expect(view.revision.files).toBe(2);
    expect(view.revision.bytes).toBeGreaterThan(3 * MB);
  });

  it('refuses a request over 40 MB with 413', async () => {
    const huge = 'x'.repeat(41 * MB);
    const error = await deploy({ files: [{ path: 'index.html', content: huge }] }).then(
      () => undefined,
      (err: unknown) => err as Error & { code?: number },
    );
    expect(error, 'the call must fail').toBeDefined();
    expect(String(error!.message)).toMatch(/413|40 MB/);
  });

  it('sends a site in several calls that go live at once: start_deploy, deploy_site with "manifest", get_deploy', async () => {
    const { createHash, randomBytes } = await import('node:crypto');
    const media = randomBytes(2 * MB).toString('base64');
    const files: Record<string, string> = { 'index.html': page('In parts'), 'about.html': page('About'), 'media.txt': media };
    const describe = Object.entries(files).map(([path, content]) => ({
      path,
      size: Buffer.byteLength(content),
      sha256: createHash('sha256').update(content).digest('hex'),
    }));
    const started = structured<{ manifest: string; missing: string[]; missing_bytes: number; agent_message: string }>(
      await client.callTool({ name: 'start_deploy', arguments: { files: describe } }),
    );
    expect(started.missing).toHaveLength(3);
    expect(started.agent_message).toContain(`deploy_site {"manifest": "${started.manifest}"}`);
    expect(started.agent_message).toContain(`get_deploy {"manifest": "${started.manifest}"}`);
    expect(started.agent_message).not.toMatch(/\/v1\//);

    // A large part (spooled to disk unparsed: the envelope keeps its manifest), then a small one.
    const first = structured<{ missing: string[]; received: number }>(
      await deploy({ manifest: started.manifest, files: [{ path: 'media.txt', content: media }] }),
    );
    expect(first).toMatchObject({ received: 1 });
    expect(first.missing).toHaveLength(2);
    const progress = structured<{ missing: string[]; received_bytes: number }>(
      await client.callTool({ name: 'get_deploy', arguments: { manifest: started.manifest } }),
    );
    expect(progress.received_bytes).toBe(Buffer.byteLength(media));
    const sites = structured<{ sites: unknown[] }>(await client.callTool({ name: 'list_sites', arguments: {} })).sites.length;

    const done = structured<{ site: { name: string }; revision: { number: number; files: number } }>(
      await deploy({
        manifest: started.manifest,
        files: [
          { path: 'index.html', content: files['index.html']! },
          { path: 'about.html', content: files['about.html']! },
        ],
      }),
    );
    expect(done.revision).toMatchObject({ number: 1, files: 3 });
    expect(structured<{ sites: unknown[] }>(await client.callTool({ name: 'list_sites', arguments: {} })).sites).toHaveLength(sites + 1);
    // Published, the manifest answers what it published (a lost answer is not a lost deploy).
    const after = structured<{ manifest: string; site: { name: string }; revision: { number: number } }>(
      await client.callTool({ name: 'get_deploy', arguments: { manifest: started.manifest } }),
    );
    expect(after).toMatchObject({ manifest: started.manifest, site: { name: done.site.name }, revision: { number: 1 } });
  });

  it('answers a deploy_site retried with the same idempotency_key with the first answer, small or large, and publishes once', async () => {
    const { randomBytes, randomUUID } = await import('node:crypto');
    const sitesNow = async (): Promise<number> => structured<{ sites: unknown[] }>(await client.callTool({ name: 'list_sites', arguments: {} })).sites.length;
    for (const extra of [[], [{ path: 'big.bin', content: randomBytes(3 * MB).toString('base64'), encoding: 'base64' }]]) {
      const args = { idempotency_key: randomUUID(), files: [{ path: 'index.html', content: page('Once') }, ...extra] };
      const first = structured<{ site: { name: string }; revision: { id: string } }>(await deploy(args));
      const sites = await sitesNow();
      const again = structured<{ site: { name: string }; revision: { id: string } }>(await deploy(args));
      expect(again).toEqual(first);
      expect(await sitesNow()).toBe(sites);
      const other = await deploy({ ...args, files: [{ path: 'index.html', content: page('Other') }] });
      expect(other.isError).toBe(true);
      expect(textOf(other)).toMatch(/^conflict: /);
    }
  });
});

describe('a new claim link through MCP', () => {
  it('gives the site token of an unclaimed site a new claim link', async () => {
    const { anonymousSite } = await import('../api/api-helpers.js');
    const site = await anonymousSite(server.store, Date.now() + 3600_000);
    const asSite = await connectClient(mcpUrl, site.siteToken);
    try {
      const link = structured<{ claim_url: string; expires_at: string }>(await asSite.callTool({ name: 'new_claim_link', arguments: { site: site.name } }));
      expect(link.claim_url).toMatch(/\/claim\/ct_/);
      expect(link.claim_url).not.toContain(site.claimToken);
    } finally {
      await asSite.close();
    }
    const refused = await client.callTool({ name: 'new_claim_link', arguments: { site: site.name } });
    expect(refused.isError).toBe(true);
  });
});
