import { readFile } from 'node:fs/promises';
import { ServiceError } from '../errors.js';
import { formatBytes, hashDeployBody, MANIFEST_LIFETIME_MS, readIdempotencyKey, type DeployBody } from '../sites/index.js';
import { domainToolSpecs } from './domain-tools.js';
import { changes, reads, type ToolContext, type ToolSpec } from './tool-spec.js';
import { bodyInputs, deployInput, input, manifestInput, outputs, page, siteName, siteOnly } from './schemas.js';

/** `read_file` returns whole files inline; larger ones are read from the site or the REST API. */
export const MAX_READ_FILE_BYTES = 5 * 1024 * 1024;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const pageOf = (args: Record<string, unknown>) => ({ limit: args.limit as number | undefined, cursor: text(args.cursor) });

/**
 * Every tool of the MCP server. Each is a thin mapping onto one operation, the same one the REST
 * endpoint calls, so access rules, limits and messages are the REST API's.
 */
export function toolSpecs(): ToolSpec[] {
  return [
    {
      name: 'get_account',
      title: 'Get account',
      description:
        'The account behind the token: e-mail, plan, and how many sites it owns of the number its plan allows. Call it to check the token works and whether a new site fits the plan.',
      inputSchema: input({}),
      outputSchema: outputs.account,
      annotations: reads,
      run: async ({ ops, caller }) => ops.account.me(caller),
    },
    {
      name: 'list_sites',
      title: 'List sites',
      description:
        'Sites the account is a member of, with the caller’s role, plan, address and live revision, oldest first. Page with limit and cursor (next_cursor) when next_cursor is not null.',
      inputSchema: input({ ...page }),
      outputSchema: outputs.siteList,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.sites.list(caller, pageOf(args)),
    },
    {
      name: 'get_site',
      title: 'Get site',
      description:
        'One site: its address, plan, the caller’s role and its live revision. Use live_revision.id as base_revision when updating the site with deploy_site.',
      inputSchema: siteOnly,
      outputSchema: outputs.siteOrClaim,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.sites.get(caller, String(args.site)),
    },
    {
      name: 'deploy_site',
      title: 'Deploy site',
      description:
        'Publishes a static site from inline files and returns its live address. Without "site" it creates a new site in the account. ' +
        'To update a site, send "site" and "base_revision" (the live revision id from get_site): a full deploy replaces every file; ' +
        'with "patch": true only the files sent change, "deleted" removes paths, and everything else is kept. ' +
        "If someone published in between, the call fails with a conflict and publishes nothing: read what is live with list_files and read_file (get_site has no file contents), merge your changes into those files, and deploy again with the conflict's details.live_revision as base_revision. " +
        'With "publish": false the update is stored as a draft that is not live: the answer has its preview_url to check, and promote_site makes it live. ' +
        'Text files go as utf8, binary files as base64. To redeploy without resending unchanged files, give those as {path, sha256, size} from list_files instead of content (only content this site already has). ' +
        'index.html at the root is required. Files with secret keys are refused (blocked_secret names file and line). ' +
        'One call carries at most 40 MB. A larger site goes live at once, as one revision, in several calls: start_deploy with every file by path, size and sha256; ' +
        'then deploy_site with "manifest" (its id) and some of the missing files per call, each under 40 MB, in any order; each call answers what is still missing, ' +
        'and the call that brings the last one publishes the site and answers with its revision. After an interruption, get_deploy tells what is still missing (once published, what it published). ' +
        'Send an "idempotency_key" (a fresh UUID per deploy) and the same one when you retry after a lost answer or a timeout: the retry answers the first answer again (the same site and revision) instead of publishing twice.',
      inputSchema: deployInput,
      outputSchema: outputs.deployOrPart,
      annotations: changes(true),
      run: deploy,
    },
    {
      name: 'start_deploy',
      title: 'Start a deploy in parts',
      description:
        'The first step of a deploy sent in several calls (a site over 40 MB, or a redeploy that sends only what changed): describe every file of the site by path, size in bytes and sha256 (lower-case hex). ' +
        'Without "site" it creates a new site; to update one, send "site" and "base_revision" (the live revision id from get_site). ' +
        'The answer is a manifest id and the sha256 of every content to upload ("missing"); send those files with deploy_site and "manifest", in calls of at most 40 MB. ' +
        `Nothing is live until the last one has arrived. The manifest lasts ${MANIFEST_LIFETIME_MS / 3_600_000} hours after its latest part.`,
      inputSchema: manifestInput,
      outputSchema: outputs.manifest,
      annotations: changes(false),
      run: async ({ ops, caller, network }, args) => ops.deploy.manifest(caller, network, args),
    },
    {
      name: 'get_deploy',
      title: 'Get deploy progress',
      description:
        'What a deploy started with start_deploy still needs: the sha256 of every content still missing, what has arrived and when it expires. Call it after an interruption, then send only what is missing with deploy_site and "manifest". ' +
        'For a day after it published, it answers what it published (site and revision), so a lost answer is never a reason to deploy again.',
      inputSchema: input({ manifest: { type: 'string', pattern: '^mf_', description: 'The manifest id from start_deploy.' } }, ['manifest']),
      outputSchema: outputs.deployOrPart,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.deploy.manifestStatus(caller, String(args.manifest)),
    },
    {
      name: 'list_files',
      title: 'List files',
      description: 'Every file of the site’s live revision: path, size in bytes and sha256, in path order.',
      inputSchema: siteOnly,
      outputSchema: outputs.fileList,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.files.list(caller, String(args.site)),
    },
    {
      name: 'read_file',
      title: 'Read file',
      description: `One file of the site’s live revision. Text comes back as utf8, anything else as base64. Files over ${formatBytes(MAX_READ_FILE_BYTES)} are refused: read those from the site’s address.`,
      inputSchema: input({ site: siteName, path: { type: 'string', minLength: 1, description: 'Path as list_files shows it, e.g. "index.html".' } }, [
        'site',
        'path',
      ]),
      outputSchema: outputs.file,
      annotations: reads,
      run: readSiteFile,
    },
    {
      name: 'list_revisions',
      title: 'List revisions',
      description:
        'The site’s revisions, newest first, within its plan’s history reach: id, number, author, time, files, bytes and kind (deploy, patch, rollback). Page with limit and cursor.',
      inputSchema: input({ site: siteName, ...page }, ['site']),
      outputSchema: outputs.revisionList,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.revisions.list(caller, String(args.site), pageOf(args)),
    },
    {
      name: 'list_site_events',
      title: 'List site events',
      description:
        "The site's audit log, newest first: who (an e-mail, site_token or anonymous) changed what and when — deploys, refused deploys, rollbacks, members, access, domains, deletion, webhooks. Any member may read it. Page with limit and cursor.",
      inputSchema: input({ site: siteName, ...page }, ['site']),
      outputSchema: outputs.eventList,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.events.forSite(caller, String(args.site), pageOf(args)),
    },
    {
      name: 'get_site_analytics',
      title: 'Get site analytics',
      description:
        'How the site is doing: page views, visitors, 404s, bytes, crawler views, top pages and referrer hosts, per UTC day and in total, counted by the server (no script or cookie on the pages). ' +
        'Default: the last 30 days; from and to (YYYY-MM-DD) choose others, within the plan’s history reach. Visits show up within a minute.',
      inputSchema: input(
        {
          site: siteName,
          from: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'First day, YYYY-MM-DD (UTC).' },
          to: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Last day, YYYY-MM-DD (UTC); default today.' },
        },
        ['site'],
      ),
      outputSchema: outputs.analytics,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.analytics.read(caller, String(args.site), { from: args.from, to: args.to }),
    },
    {
      name: 'rollback_site',
      title: 'Roll back site',
      description:
        'Makes an earlier revision live again, as a new revision with the next number (nothing is lost: the current content stays in the history). Needs the editor or owner role.',
      inputSchema: bodyInputs.rollback,
      outputSchema: outputs.rollback,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.revisions.rollback(caller, String(args.site), args.revision),
    },
    {
      name: 'promote_site',
      title: 'Promote revision',
      description:
        'Makes a stored revision live as it is, without a copy: usually a draft from deploy_site with "publish": false, after checking its preview_url. ' +
        '"base_revision" must be the live revision id (get_site or list_revisions); if someone published in between, the call fails with a conflict and nothing changes. Needs the editor or owner role.',
      inputSchema: bodyInputs.promote,
      outputSchema: outputs.promote,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.revisions.promote(caller, String(args.site), args.revision, args.base_revision),
    },
    {
      name: 'delete_revision',
      title: 'Delete revision',
      description:
        'Deletes a revision that is not live, e.g. a draft or an old deploy that published something by mistake: at once its preview address answers 410, its files are no longer served, and it leaves list_revisions; its number is not used again. ' +
        'The live revision cannot be deleted: roll back (rollback_site) or promote another revision first. It cannot be undone, so check with the user first. Needs the owner role (or the site token of an unclaimed site).',
      inputSchema: input(
        { site: siteName, revision: { type: 'string', minLength: 1, description: 'Revision id (rev_…) from list_revisions, or its number.' } },
        ['site', 'revision'],
      ),
      outputSchema: outputs.revisionDeleted,
      annotations: changes(true),
      run: async ({ ops, caller }, args) => ops.revisions.delete(caller, String(args.site), args.revision),
    },
    {
      name: 'get_access',
      title: 'Get access',
      description:
        'Who may see the site: mode public, password (visitors type a password) or members (members of the site only); and previews: "members" when the previews of a public site are kept to members and holders of a preview link.',
      inputSchema: siteOnly,
      outputSchema: outputs.access,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.access.get(caller, String(args.site)),
    },
    {
      name: 'set_access',
      title: 'Set access',
      description:
        'Sets who may see the site: "mode" is "public", "password" (with a password of 8-128 characters the user chose; it is stored only as a hash) or "members"; setting it signs every visitor out. ' +
        '"previews": "members" keeps the previews (<number>--<name> addresses) of a public site to its members and to whoever holds a preview link, while the live address stays public; the preview_url that deploy_site (drafts) and list_revisions then answer is such a link, to share with reviewers. "previews": "public" turns it off and ends the links. ' +
        'Send mode, previews or both. Unclaimed sites stay public. Needs the owner role. A member’s API token opens a protected site or preview as "Authorization: Bearer".',
      inputSchema: bodyInputs.setAccess,
      outputSchema: outputs.access,
      annotations: changes(false),
      run: async ({ ops, caller }, args) =>
        ops.access.set(caller, String(args.site), {
          ...(args.mode !== undefined ? { mode: args.mode } : {}),
          ...(args.password !== undefined ? { password: args.password } : {}),
          ...(args.previews !== undefined ? { previews: args.previews } : {}),
        }),
    },
    {
      name: 'rename_site',
      title: 'Rename site',
      description:
        'Gives the site a new name and address: 4-63 characters of a-z, 0-9 and "-", not in the random word-word-NNNN form, and never used before. The old address redirects to the new one. Needs the editor or owner role.',
      inputSchema: bodyInputs.rename,
      outputSchema: outputs.rename,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.sites.rename(caller, String(args.site), args.name),
    },
    {
      name: 'new_claim_link',
      title: 'New claim link',
      description:
        'A new claim link for an unclaimed anonymous site, with its site token; the previous link stops working at once. Use it when the claim link was lost: give the new one to the user and keep it as claim_url in .service.json.',
      inputSchema: input({ site: siteName }, ['site']),
      outputSchema: outputs.claimLink,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.claims.renewLink(caller, String(args.site)),
    },
    {
      name: 'delete_site',
      title: 'Delete site',
      description:
        'Asks for the site to be deleted. Nothing is deleted yet: the answer has an approve_url where an owner must confirm by typing the site’s address. Give that link to the user. Needs the owner role.',
      inputSchema: siteOnly,
      outputSchema: outputs.deletion,
      annotations: changes(true),
      run: async ({ ops, caller }, args) => ops.sites.requestDeletion(caller, String(args.site)),
    },
    {
      name: 'list_members',
      title: 'List members',
      description: 'People who can reach the site with their roles (viewer, editor, owner), and pending invitations.',
      inputSchema: siteOnly,
      outputSchema: outputs.members,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.members.list(caller, String(args.site)),
    },
    {
      name: 'invite_member',
      title: 'Invite member',
      description:
        'E-mails an invitation to join the site as editor (may deploy and roll back) or viewer (may read the site and its history). Inviting the same address again replaces the pending invitation. Needs the owner role.',
      inputSchema: bodyInputs.invite,
      outputSchema: outputs.invite,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.members.invite(caller, String(args.site), { email: args.email, role: args.role }),
    },
    {
      name: 'remove_member',
      title: 'Remove member',
      description:
        'Takes a member’s access away, in two steps. Call it without "confirm": the answer has a confirm_token and nobody is removed yet. ' +
        'Check with the user, then call again with "confirm": <confirm_token> within 5 minutes to remove the member. Needs the owner role; the last owner cannot be removed.',
      inputSchema: input(
        {
          site: siteName,
          email: { type: 'string', minLength: 3, maxLength: 254, description: 'The member’s address.' },
          confirm: { type: 'string', description: 'The confirm_token from the first call.' },
        },
        ['site', 'email'],
      ),
      outputSchema: outputs.removal,
      annotations: changes(true),
      run: async ({ ops, caller }, args) => ops.members.remove(caller, String(args.site), String(args.email), text(args.confirm)),
    },
    ...domainToolSpecs(),
  ];
}

/** SPEC 4.2 through the same deploy operation, ingest pool and checks as `POST /v1/deploy`. */
async function deploy(context: ToolContext, args: Record<string, unknown>): Promise<unknown> {
  const { ops, caller, network, signal } = context;
  // A small call's arguments were parsed to be checked against the tool's schema; they go to the
  // ingest worker in memory as a REST JSON body does, never through a file.
  const body = context.deployArguments ?? jsonBody(args);
  // A part names its manifest; a large call's arguments stay unparsed, but the envelope keeps it.
  const manifest = text(args.manifest);
  const key = readIdempotencyKey(args.idempotency_key);
  const publish = async () => {
    const pending = await ops.deploy.begin({ caller, network, bodyKind: 'json', idempotencyKeyInBody: true, ...(manifest !== undefined ? { manifest } : {}) });
    const outcome = await pending.finish(body, signal);
    return { status: outcome.status ?? 201, view: outcome.view };
  };
  if (key === undefined) return (await publish()).view;
  // Hashed before the ingest pool takes the bytes over.
  const hash = await hashDeployBody(body);
  return (await ops.retries.once({ caller, network, key, target: 'mcp\0deploy_site' }, async () => hash, publish)).view;
}

/** Bytes of their own (not a view of a shared pool), so they move to the worker rather than being copied. */
function jsonBody(args: Record<string, unknown>): DeployBody {
  const data = new TextEncoder().encode(JSON.stringify(args));
  return { data, bytes: data.byteLength };
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const TEXT_TYPE = /^(text\/|application\/([a-z.+-]*\+)?(json|xml|javascript)\b|image\/svg\+xml)/i;

async function readSiteFile({ ops, caller }: ToolContext, args: Record<string, unknown>): Promise<unknown> {
  const name = String(args.site);
  const file = await ops.files.find(caller, name, String(args.path).replace(/^\/+/, ''));
  if (file.entry.size > MAX_READ_FILE_BYTES) {
    throw new ServiceError('too_large', `${file.path} is ${formatBytes(file.entry.size)}; read_file returns files up to ${formatBytes(MAX_READ_FILE_BYTES)}.`, {
      agentMessage: `Fetch ${file.path} from the site’s address instead, or with GET /v1/sites/${name}/files/${file.path} on the REST API.`,
      details: { file: file.path },
    });
  }
  const bytes = await readFile(file.blobPath);
  let content: string | undefined;
  let encoding: 'utf8' | 'base64' = 'utf8';
  if (TEXT_TYPE.test(file.entry.type)) {
    try {
      content = decoder.decode(bytes);
    } catch {
      // Declared as text but not UTF-8: the bytes go as they are.
    }
  }
  if (content === undefined) {
    content = bytes.toString('base64');
    encoding = 'base64';
  }
  return {
    site: name,
    path: file.path,
    revision: file.revision,
    size: file.entry.size,
    sha256: file.entry.sha256,
    content_type: file.entry.type,
    encoding,
    content,
  };
}
