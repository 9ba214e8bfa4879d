import { mkdirSync } from 'node:fs';
import { ServiceError } from '../errors.js';
import { declaredLength, type HttpRequest, type HttpResponse, isAborted, receiveBody, sendError, sendJson, trackAbort } from '../http/index.js';
import { hashDeployBody, identifyBearer, readIdempotencyKey, requestBodyLimit, type DeployRequest } from '../sites/index.js';
import { REPLAYED_HEADER, requestNetwork } from './handler.js';
import { readRequest, type ApiRequest } from './request.js';
import type { ApiOptions } from './route.js';

/** What the deploy edge runs with: the API's own options (its store only to identify the bearer). */
export type DeployEdgeDeps = Omit<ApiOptions, 'routes'>;

const isJsonBody = (contentType: string | undefined): boolean => /^application\/([a-z.+-]*\+)?json\b/i.test(contentType?.trim() ?? '');

/**
 * `POST /v1/deploy` (SPEC 4.1, 4.2): receives the body (into memory when its declared size fits
 * the thread's budget, else into a spool file) while the deploy operation decides what it may do,
 * then hands it to it. Nothing is live until the operation's one
 * store transaction, so a refused deploy changes nothing. Deploys are not counted against the
 * per-credential API rate; anonymous ones have their own caps.
 */
export function createDeployHandler(deps: DeployEdgeDeps): (res: HttpResponse, req: HttpRequest) => void {
  const { ops, config, log } = deps;
  const spool = { dir: config.spoolDir, memory: deps.memory };
  mkdirSync(spool.dir, { recursive: true });
  const limit = requestBodyLimit(config, 'rest');

  return (res, req) => {
    const arrived = performance.now();
    const request = readRequest(res, req, []);
    trackAbort(res);
    const intake = receiveBody(res, { limit, declaredBytes: declaredLength(request.headers), spool, pacer: deps.pacer });
    void (async () => {
      try {
        if (intake.refused) throw intake.refused;
        // A site or token another node made a moment ago decides this deploy too.
        await ops.admission.catchUp();
        const caller = identifyBearer(request.headers.authorization, deps.store, 'rest');
        ops.tokens.noteUse(caller);
        const key = readIdempotencyKey(request.headers['idempotency-key']);
        const network = requestNetwork(request, config);
        const deploy: DeployRequest = {
          caller,
          network,
          bodyKind: isJsonBody(request.headers['content-type']) ? 'json' : 'archive',
          ...deployQuery(request.query),
          baseRevision: request.headers['x-base-revision'],
          manifestSecret: request.headers['x-manifest-secret'],
        };
        // The body is hashed as it is once it has arrived, before the ingest pool takes it over.
        const hashed = key === undefined ? undefined : intake.done.then(hashDeployBody);
        hashed?.catch(() => undefined);
        const publish = async (): Promise<{ status: number; view: unknown; replayed?: true }> => {
          const pending = await ops.deploy.begin(deploy);
          const body = await intake.done;
          await hashed;
          const outcome = await pending.finish({ ...body, uploadMs: Math.round(performance.now() - arrived) });
          return { status: outcome.status ?? 201, view: outcome.view, ...(outcome.replayed ? { replayed: true as const } : {}) };
        };
        const outcome =
          key === undefined ? await publish() : await ops.retries.once({ caller, network, key, target: deployTarget(request, deploy) }, () => hashed!, publish);
        sendJson(res, outcome.status, outcome.view, outcome.replayed ? { [REPLAYED_HEADER]: 'true' } : {});
      } catch (err) {
        if (isAborted(res)) return;
        // The body may still be arriving (an early refusal, or one over the size limit).
        const finished = await intake.drain();
        sendError(res, err, log, { closeConnection: !finished, context: { route: 'deploy' } });
      } finally {
        intake.discard();
      }
    })();
  };
}

/**
 * What a deploy asks besides its body, for its idempotency key: the path, the query (sorted), the
 * body's kind and the headers that change what it does. The caller is the key's scope.
 */
function deployTarget(request: ApiRequest, deploy: DeployRequest): string {
  const query = new URLSearchParams([...request.query].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))).toString();
  return ['POST', request.path, query, deploy.bodyKind, deploy.baseRevision ?? '', deploy.manifestSecret ?? ''].join('\0');
}

/** The query parameters `POST /v1/deploy` reads (its OpenAPI parameters `in: query`). */
export const DEPLOY_QUERY_PARAMS = ['site', 'manifest', 'publish'] as const;

/**
 * The deploy's query: a parameter it does not know is refused rather than ignored, since a
 * misspelt `?site=` would otherwise create a new site instead of updating the one meant. A
 * repeated parameter counts once, as its first value (`URLSearchParams.get`).
 */
function deployQuery(query: URLSearchParams): Pick<DeployRequest, 'site' | 'manifest' | 'publish'> {
  const known: readonly string[] = DEPLOY_QUERY_PARAMS;
  for (const name of new Set(query.keys())) {
    if (known.includes(name)) continue;
    const shown = JSON.stringify(name.slice(0, 40));
    const header = /^(x-)?base[-_]revision$/i.test(name);
    throw new ServiceError('bad_request', `Unknown query parameter ${shown} for POST /v1/deploy; the known ones are ${known.join(', ')}.`, {
      agentMessage: header
        ? 'Nothing was published. Send the base revision as the X-Base-Revision header (archives) or "base_revision" in the JSON body, with the site as ?site=<name>.'
        : `Nothing was published. POST /v1/deploy takes only the query parameters ${known.join(', ')}; check the spelling and send the request again.`,
      details: { parameter: name.slice(0, 100), known: [...known] },
    });
  }
  return {
    site: query.get('site') ?? undefined,
    manifest: query.get('manifest') ?? undefined,
    ...publishQuery(query.get('publish')),
  };
}

/** `?publish=false` (or `0`) stores a draft; `true`/`1` or no parameter publishes. */
function publishQuery(raw: string | null): { publish?: false } {
  if (raw === null || raw === 'true' || raw === '1') return {};
  if (raw === 'false' || raw === '0') return { publish: false };
  throw new ServiceError('bad_request', `publish must be true or false (got "${raw.slice(0, 20)}").`, {
    agentMessage: 'Use ?publish=false to store a draft that is not live, or leave the parameter out.',
  });
}
