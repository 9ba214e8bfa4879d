import { MAX_MANIFEST_BODY_BYTES, MAX_REQUEST_BYTES, SITE_NAME_PATTERN } from '../../rules/index.js';
import { schema } from '../../contract/index.js';
import { formatDuration, MANIFEST_LIFETIME_MS, REPLAY_LIFETIME_MS } from '../../sites/index.js';
import { createDeployHandler } from '../deploy.js';
import { siteEndpoints as e } from '../endpoints.js';
import { answer, shape, type ApiRoute } from '../route.js';
import { routeGroup } from './group.js';
import { idempotencyKeyParam, manifestParam, manifestSecretParam } from './params.js';

const { object, str } = schema;
const MB = 1024 * 1024;
// Anyone may publish (without a credential, an anonymous site).
const publishing = { tag: 'Deploy', auth: ['none', 'site', 'api'] } as const;
const deploy = routeGroup(publishing);
// A manifest named by its id, with its secret when it was made without a credential.
const manifest = routeGroup({ ...publishing, parameters: [manifestParam, manifestSecretParam] });
const bytesOf = (type: string) => ({ schema: { type: 'string', contentMediaType: type } });

/** Publishing: one request, or a manifest and its parts (docs/publishing.md). */
export const deployRoutes: readonly ApiRoute[] = [
  deploy({
    method: 'POST',
    path: '/v1/deploy',
    operationId: 'deploy',
    summary: 'Publish a site (create or update)',
    description:
      'The body is an archive (`.tar.gz`, `.tgz`, `.tar`, `.zip`, recognised by its bytes) or JSON (`Content-Type: application/json`). ' +
      'Without `site` it creates a site: anonymous without a credential (it expires unless claimed), in the account with an API token. ' +
      "With `site` it updates that site, which needs its site token or an editor's API token and the live revision as `X-Base-Revision` (JSON: `base_revision`); a stale base is `409` and publishes nothing. " +
      'A query parameter besides `site`, `manifest` and `publish` is refused with `400`, as is a base revision without `site`; a parameter given twice counts as its first value. ' +
      `One request carries at most ${MAX_REQUEST_BYTES / MB} MB.`,
    parameters: [
      {
        name: 'site',
        in: 'query',
        required: false,
        description: 'Site to update (archives; JSON bodies name it inside).',
        schema: str(undefined, { pattern: SITE_NAME_PATTERN }),
      },
      {
        name: 'X-Base-Revision',
        in: 'header',
        required: false,
        description: 'Live revision id the update is based on; required with `site`.',
        schema: str(undefined, { pattern: '^rev_' }),
      },
      {
        name: 'manifest',
        in: 'query',
        required: false,
        description:
          'Uploads a part of a digest deploy: the body holds some or all of the contents the manifest lists as missing (or is empty when none are). Any number of parts, in any order, each within the request limit; `202` while contents are still missing, `201` from the part that brings the last one, which publishes the whole site as one revision. The site and base come from the manifest.',
        schema: str(undefined, { pattern: '^mf_' }),
      },
      manifestSecretParam,
      idempotencyKeyParam,
      {
        name: 'publish',
        in: 'query',
        required: false,
        description:
          '`false` stores the revision as a draft: every check runs, the live site does not change, and the answer has `live: false` and a `preview_url`. JSON bodies may say `"publish": false` instead. Only for updates.',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
    ],
    body: {
      content: {
        'application/gzip': bytesOf('application/gzip'),
        'application/zip': bytesOf('application/zip'),
        'application/x-tar': bytesOf('application/x-tar'),
        'application/octet-stream': bytesOf('application/octet-stream'),
        'application/json': { schema: shape('JsonDeploy') },
      },
    },
    responses: {
      201: answer('DeployResult', 'Published: the new revision is live.'),
      202: answer('ManifestResult', 'A part of a digest deploy arrived (`?manifest=`); contents are still missing and nothing is live yet.'),
    },
    errors: ['forbidden', 'not_found', 'conflict', 'gone', 'blocked_secret', 'unavailable'],
    handle: { raw: createDeployHandler },
  }),
  deploy({
    method: 'POST',
    path: '/v1/deploy/manifest',
    operationId: 'deployManifest',
    summary: 'Describe a deploy by hash; learn what to upload',
    description:
      'The first half of a digest deploy: the whole site by path, size and sha256. The answer lists the contents the service lacks; upload only those with `POST /v1/deploy?manifest=…`. ' +
      "Only contents of this site's own recent revisions count as present, so a manifest never confirms content stored elsewhere. " +
      `Every check of a deploy that needs no bytes runs here (access, the base revision, paths, skips, executable names, plan limits, index.html). A manifest lasts ${formatDuration(MANIFEST_LIFETIME_MS)} after it was made or after its latest part, and publishes once. ` +
      'It belongs to the credential that made it; one made without a credential answers a `manifest_secret` once, which every later request for it must send as `X-Manifest-Secret`.',
    parameters: [idempotencyKeyParam],
    body: { schema: shape('Manifest'), maxBytes: MAX_MANIFEST_BODY_BYTES },
    responses: { 201: answer('ManifestResult', 'What to upload.') },
    errors: ['forbidden', 'not_found', 'conflict', 'gone', 'unavailable'],
    handle: e.manifest,
  }),
  manifest({
    method: 'GET',
    path: '/v1/deploy/manifest/{id}',
    operationId: 'getManifest',
    summary: 'What a digest deploy still needs',
    description:
      "The contents still missing from a manifest's upload, what has arrived and when it expires: ask after an interrupted upload, then send only what is missing. A refused deploy (a secret in one of its parts) answers its refusal; what the next part would meet (the site gone, access lost, a stale base revision) is answered as the part would be. " +
      `Once published, for ${formatDuration(REPLAY_LIFETIME_MS)}: the answer of the part that published it (site, revision, and for an anonymous create the same \`site_token\` and \`claim_url\`), to its maker only; that part sent again gets the same answer.`,
    responses: { 200: answer({ oneOf: [shape('ManifestResult'), shape('DeployResult')] }, 'What is missing; once published, what it published.') },
    errors: ['forbidden', 'not_found', 'conflict', 'gone', 'blocked_secret'],
    handle: e.manifestStatus,
  }),
  manifest({
    method: 'DELETE',
    path: '/v1/deploy/manifest/{id}',
    operationId: 'abandonManifest',
    summary: 'Give up a digest deploy',
    description: 'Drops the manifest; its uploaded parts are deleted at the next sweep and no longer count against the cap on unpublished uploads.',
    responses: { 200: answer(object({ abandoned: { type: 'boolean', const: true } }, ['abandoned']), 'Given up.') },
    errors: ['not_found'],
    handle: e.abandonManifest,
  }),
];
