import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import {
  type BodyMemory,
  type HttpRequest,
  type HttpResponse,
  isAborted,
  receiveBody,
  sendError,
  sendJson,
  SpoolError,
  trackAbort,
  type UploadPacer,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { MAX_REQUEST_BYTES } from '../rules/index.js';
import { identifyBearer, type Operations } from '../sites/index.js';
import type { Store } from '../store/index.js';
import { requestNetwork } from './handler.js';
import { readRequest } from './request.js';

export interface DeployEdgeDeps {
  ops: Operations;
  /** Read-only: who the bearer token belongs to. */
  store: Store;
  pacer?: UploadPacer;
  /** This thread's budget for deploy bodies received into memory rather than spooled. */
  memory?: BodyMemory;
  config: Readonly<Config>;
  log: Logger;
}

const MB = 1024 * 1024;
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
  const spoolDir = config.spoolDir;
  mkdirSync(spoolDir, { recursive: true });

  return (res, req) => {
    const arrived = performance.now();
    const request = readRequest(res, req, []);
    trackAbort(res);
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > MAX_REQUEST_BYTES) {
      return sendError(res, tooLargeRequest(), log, { closeConnection: true });
    }
    const spoolPath = join(spoolDir, `${randomUUID()}.upload`);
    const spool = receiveBody(res, {
      path: spoolPath,
      maxBytes: MAX_REQUEST_BYTES,
      pacer: deps.pacer,
      deadlineMs: config.deploy.uploadTimeoutMs,
      declaredBytes: declaredLength(declared, request.headers['transfer-encoding']),
      memory: deps.memory,
    });
    void (async () => {
      try {
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
        const body = await spool.done;
        const uploadMs = Math.round(performance.now() - arrived);
        const outcome = await pending.finish(
          body.data !== undefined ? { data: body.data, bytes: body.bytes, uploadMs } : { spoolPath, bytes: body.bytes, uploadMs },
        );
        sendJson(res, outcome.status ?? 201, outcome.view);
      } catch (err) {
        if (isAborted(res)) return;
        if (err instanceof SpoolError && err.reason === 'aborted') return;
        const refusal = err instanceof SpoolError && err.reason === 'too_large' ? tooLargeRequest() : err;
        // The body may still be arriving (an early refusal, or one over the size limit).
        const finished = await spool.drain();
        sendError(res, refusal, log, { closeConnection: !finished, context: { route: 'deploy' } });
      } finally {
        spool.discard();
        if (!spool.inMemory) await unlink(spoolPath).catch(() => undefined);
      }
    })();
  };
}

/** A body of known size (not chunked) may be received into memory. */
function declaredLength(contentLength: string | undefined, transferEncoding: string | undefined): number | undefined {
  if (transferEncoding !== undefined || contentLength === undefined || !/^\d{1,15}$/.test(contentLength.trim())) return undefined;
  return Number(contentLength.trim());
}

function tooLargeRequest(): ServiceError {
  return new ServiceError('too_large', `One request can carry at most ${MAX_REQUEST_BYTES / MB} MB.`, {
    agentMessage:
      'The upload is over 90 MB. Send the site in parts, published at once as one revision: describe every file with POST /v1/deploy/manifest, then upload the contents it lists as missing to POST /v1/deploy?manifest=<id> in several requests of at most 90 MB each (the plinth command does this by itself).',
  });
}

/** `?publish=false` (or `0`) stores a draft; `true`/`1` or no parameter publishes. */
function publishQuery(raw: string | null): { publish?: false } {
  if (raw === null || raw === 'true' || raw === '1') return {};
  if (raw === 'false' || raw === '0') return { publish: false };
  throw new ServiceError('bad_request', `publish must be true or false (got "${raw.slice(0, 20)}").`, {
    agentMessage: 'Use ?publish=false to store a draft that is not live, or leave the parameter out.',
  });
}
