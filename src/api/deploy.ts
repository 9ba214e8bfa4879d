import { mkdirSync } from 'node:fs';
import { ServiceError } from '../errors.js';
import { declaredLength, type HttpRequest, type HttpResponse, isAborted, receiveBody, sendError, sendJson, trackAbort } from '../http/index.js';
import { identifyBearer, requestBodyLimit } from '../sites/index.js';
import { requestNetwork } from './handler.js';
import { readRequest } from './request.js';
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
        const pending = await ops.deploy.begin({
          caller,
          network: requestNetwork(request, config),
          bodyKind: isJsonBody(request.headers['content-type']) ? 'json' : 'archive',
          site: request.query.get('site') ?? undefined,
          baseRevision: request.headers['x-base-revision'],
          manifest: request.query.get('manifest') ?? undefined,
          manifestSecret: request.headers['x-manifest-secret'],
          ...publishQuery(request.query.get('publish')),
        });
        const body = await intake.done;
        const outcome = await pending.finish({ ...body, uploadMs: Math.round(performance.now() - arrived) });
        sendJson(res, outcome.status ?? 201, outcome.view);
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

/** `?publish=false` (or `0`) stores a draft; `true`/`1` or no parameter publishes. */
function publishQuery(raw: string | null): { publish?: false } {
  if (raw === null || raw === 'true' || raw === '1') return {};
  if (raw === 'false' || raw === '0') return { publish: false };
  throw new ServiceError('bad_request', `publish must be true or false (got "${raw.slice(0, 20)}").`, {
    agentMessage: 'Use ?publish=false to store a draft that is not live, or leave the parameter out.',
  });
}
