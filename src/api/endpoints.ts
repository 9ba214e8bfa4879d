import type { InviteBody, PromoteBody, RenameBody, RollbackBody } from '../contract/index.js';
import { readFileSync } from 'node:fs';
import { securityHeaders, sendResponse, streamFile, type Headers } from '../http/index.js';
import { hashDeployBody, readIdempotencyKey } from '../sites/index.js';
import { objectBody, REPLAYED_HEADER, requestNetwork } from './handler.js';
import type { RouteHandle } from './route.js';

const page = (query: URLSearchParams) => ({ limit: query.get('limit') ?? undefined, cursor: query.get('cursor') ?? undefined });

/**
 * The REST endpoints of SPEC 4.3 and 4.4 other than deploy, as the route table (routes/) names
 * them: each reads its parameters, calls one operation and picks the status. Every rule lives in
 * the operation; a body with a shape in `BODIES` arrives checked against it (see `ApiRoute.body`).
 */
export const siteEndpoints = {
  me: async ({ ops, caller }) => ({ status: 200, body: ops.account.me(caller) }),
  listSites: async ({ ops, caller, request }) => ({ status: 200, body: ops.sites.list(caller, page(request.query)) }),
  getSite: async ({ ops, caller, request }) => ({ status: 200, body: await ops.sites.get(caller, request.params[0]!) }),
  renewClaimLink: async ({ ops, caller, request }) => ({ status: 201, body: await ops.claims.renewLink(caller, request.params[0]!) }),
  deleteSite: async ({ ops, caller, request }) => ({ status: 202, body: await ops.sites.requestDeletion(caller, request.params[0]!) }),
  rename: async ({ ops, caller, request, body }) => ({ status: 200, body: await ops.sites.rename(caller, request.params[0]!, (body as RenameBody).name) }),
  listFiles: async ({ ops, caller, request }) => ({ status: 200, body: ops.files.list(caller, request.params[0]!) }),
  readFile: async ({ ops, config, log, caller, request, res }) => {
    const file = await ops.files.find(caller, request.params[0]!, request.params[1]!);
    const headers: Headers = {
      'Content-Type': file.entry.type,
      'X-Revision': file.revision,
      ETag: `"${file.entry.sha256}"`,
      'Cache-Control': 'no-store',
      // Uploaded content read back on the API host must never run there.
      ...securityHeaders('upload'),
    };
    if (request.method === 'HEAD') {
      sendResponse(res, 200, headers, '', { head: true, headLength: file.entry.size });
    } else if (file.entry.size <= config.serve.streamThresholdBytes) {
      sendResponse(res, 200, headers, readFileSync(file.blobPath));
    } else {
      streamFile(res, { path: file.blobPath, start: 0, end: file.entry.size - 1, status: 200, headers, log });
    }
    return undefined;
  },
  siteAnalytics: async ({ ops, caller, request }) => ({
    status: 200,
    body: await ops.analytics.read(caller, request.params[0]!, { from: request.query.get('from') ?? undefined, to: request.query.get('to') ?? undefined }),
  }),
  listRevisions: async ({ ops, caller, request }) => ({ status: 200, body: await ops.revisions.list(caller, request.params[0]!, page(request.query)) }),
  deleteRevision: async ({ ops, caller, request }) => ({ status: 200, body: await ops.revisions.delete(caller, request.params[0]!, request.params[1]!) }),
  rollback: async ({ ops, caller, request, body }) => {
    const result = await ops.revisions.rollback(caller, request.params[0]!, (body as RollbackBody).revision);
    return { status: result.unchanged ? 200 : 201, body: result };
  },
  promote: async ({ ops, caller, request, body }) => {
    const fields = body as PromoteBody;
    return { status: 200, body: await ops.revisions.promote(caller, request.params[0]!, fields.revision, fields.base_revision) };
  },
  getAccess: async ({ ops, caller, request }) => ({ status: 200, body: ops.access.get(caller, request.params[0]!) }),
  setAccess: async ({ ops, caller, request, body }) => ({
    status: 200,
    body: await ops.access.set(caller, request.params[0]!, body as Record<string, unknown>),
  }),
  listMembers: async ({ ops, caller, request }) => ({ status: 200, body: ops.members.list(caller, request.params[0]!) }),
  invite: async ({ ops, caller, request, body }) => {
    const fields = body as InviteBody;
    return { status: 201, body: await ops.members.invite(caller, request.params[0]!, { email: fields.email, role: fields.role }) };
  },
  removeMember: async ({ ops, caller, request }) => ({
    status: 200,
    body: await ops.members.remove(caller, request.params[0]!, request.params[1]!, request.query.get('confirm') ?? undefined),
  }),
  approval: async ({ ops, request }) => ({ status: 200, body: ops.sites.getApproval(request.params[0]!) }),
  manifest: async ({ ops, config, caller, request, body, bodyBytes }) => {
    const key = readIdempotencyKey(request.headers['idempotency-key']);
    const network = requestNetwork(request, config);
    const make = async () => {
      const fields = objectBody(body, '{"files": [{"path": "index.html", "size": 123, "sha256": "…"}]}');
      return { status: 201, view: await ops.deploy.manifest(caller, network, fields) };
    };
    if (key === undefined) return { status: 201, body: (await make()).view };
    const bytes = bodyBytes ?? Buffer.alloc(0);
    const outcome = await ops.retries.once({ caller, network, key, target: `POST\0${request.path}` }, () => hashDeployBody({ data: bytes }), make);
    return { status: outcome.status, body: outcome.view, ...('replayed' in outcome ? { headers: { [REPLAYED_HEADER]: 'true' } } : {}) };
  },
  manifestStatus: async ({ ops, caller, request }) => ({
    status: 200,
    body: ops.deploy.manifestStatus(caller, request.params[0]!, request.headers['x-manifest-secret']),
  }),
  abandonManifest: async ({ ops, caller, request }) => {
    await ops.deploy.abandonManifest(caller, request.params[0]!, request.headers['x-manifest-secret']);
    return { status: 200, body: { abandoned: true } };
  },
} satisfies Record<string, RouteHandle>;
