/** The remote MCP server on the MCP host (SPEC 1, 5, 8): streamable HTTP at `/` and `/mcp`. */
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type AuthInfo } from '@modelcontextprotocol/server';
import {
  type BodyMemory,
  clientNetwork,
  copyRequest,
  declaredLength,
  isAborted,
  markFinished,
  receiveBody,
  sendError,
  sendResponse,
  statusLine,
  trackAbort,
  type Headers,
  type HttpRequest,
  type HttpResponse,
  type ReceivedBody,
  type UploadPacer,
} from '../http/index.js';
import type { Config } from '../config.js';
import { ServiceError, toErrorBody } from '../errors.js';
import type { Logger } from '../log.js';
import { OAUTH_SCOPE, requestBodyLimit, type Caller, type DeployBody, type Operations } from '../sites/index.js';
import { judgeBatch } from './batch.js';
import { splitArguments } from './envelope.js';
import { isAllowedOrigin, type OriginPolicy } from './origins.js';
import { compileTools, createToolServer } from './tool-server.js';
import type { ToolContext } from './tool-spec.js';
import { inToolWords } from './tool-words.js';
import { toolSpecs } from './tools.js';

export interface McpOptions {
  ops: Operations;
  config: Readonly<Config>;
  log: Logger;
  /** Paces large bodies while the thread is busy serving sites. */
  pacer?: UploadPacer;
  /** This thread's budget for bodies received into memory rather than spooled (shared with REST deploys). */
  memory?: BodyMemory;
}

export interface McpEdge {
  handle(res: HttpResponse, req: HttpRequest): void;
  /** Ends in-flight exchanges of the 2026-07-28 era (thread shutdown). */
  close(): Promise<void>;
}

export { MAX_READ_FILE_BYTES } from './tools.js';

/**
 * A `deploy_site` call larger than this is split (see envelope.ts): its arguments go to the ingest
 * worker as they arrived, unparsed; a smaller call is parsed here like any message.
 */
const SPLIT_MIN_BYTES = 1024 * 1024;
/** Headers that describe this hop, not the MCP message, and credentials the edge has already used. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'authorization', 'cookie', 'keep-alive', 'upgrade']);

const ALLOW_HEADERS = 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id';
const EXPOSE_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version';
const PRM_PATH = '/.well-known/oauth-protected-resource';
const MCP_SCOPE = OAUTH_SCOPE;

/**
 * Runs `make` with the console's warnings sent to the log at debug level. The MCP SDK's handler
 * warns on the console, once per HTTP thread, that JSON answers drop notifications sent in the
 * middle of a call (Plinth's tools send none): a line outside the JSON logs, printed at every
 * start whatever PLINTH_LOG_LEVEL says, that reads like a fault to an operator.
 */
function withConsoleWarningsLogged<T>(log: Logger, make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => log.debug({ message: args.map(String).join(' ') }, 'mcp.library_warning');
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

export function createMcp(options: McpOptions): McpEdge {
  const { ops, config, log } = options;
  const catalogue = compileTools(toolSpecs());
  // Both protocol eras, statelessly. 2026-07-28 requests carry their whole context in each
  // message and go to the SDK's per-request handler; 2025-era requests get a fresh server and a
  // fresh transport answering in JSON. Either way a server serves one request only: its caller
  // and body come in as `authInfo.extra.context`.
  const serverFor = (authInfo: AuthInfo | undefined) => {
    const context = (authInfo?.extra as { context?: ToolContext } | undefined)?.context;
    if (!context) throw new Error('MCP request without its context');
    return createToolServer(catalogue, context, log);
  };
  const modern = withConsoleWarningsLogged(log, () =>
    createMcpHandler((ctx) => serverFor(ctx.authInfo), {
      legacy: 'reject',
      responseMode: 'json',
      onerror: (err) => log.debug({ err: err.message }, 'mcp.protocol_error'),
    }),
  );
  async function serveMessage(request: Request, options: { parsedBody: unknown; authInfo: AuthInfo }): Promise<Response> {
    if (!(await isLegacyRequest(request, options.parsedBody))) return modern.fetch(request, options);
    const server = serverFor(options.authInfo);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, options);
    } finally {
      await server.close().catch(() => undefined);
    }
  }

  const spool = { dir: config.spoolDir, memory: options.memory };
  mkdirSync(spool.dir, { recursive: true });
  const limit = requestBodyLimit(config, 'mcp');
  const base = config.publicUrls.mcp;
  // The server is one resource reachable at two paths; each path has its own metadata. The root
  // is spelled as URL parsers spell it (with the slash), so clients that compare parsed URLs and
  // clients that compare strings agree.
  const resources = { '/': `${base}/`, '/mcp': `${base}/mcp` } as const;
  const policy: OriginPolicy = {
    own: [config.publicUrls.mcp, config.publicUrls.app, config.publicUrls.docs].map((url) => new URL(url).origin),
    extra: config.mcp.allowedOrigins,
  };

  function metadataFor(path: '/' | '/mcp'): Record<string, unknown> {
    return {
      resource: resources[path],
      authorization_servers: [config.publicUrls.app],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: 'Plinth',
      resource_documentation: config.publicUrls.docs,
    };
  }
  const metadataUrl = (path: '/' | '/mcp'): string => `${base}${PRM_PATH}${path === '/' ? '' : '/mcp'}`;

  // Spooled bodies are read back and parsed one at a time per thread, so however many deploys are
  // in flight, the thread holds at most one of them in memory; the others wait on disk.
  let reading: Promise<unknown> = Promise.resolve();
  function parseInTurn(received: ReceivedBody): ReturnType<typeof parseMessage> {
    if (received.data !== undefined) return parseMessage(received);
    const turn = reading.then(() => parseMessage(received));
    reading = turn.catch(() => undefined);
    return turn;
  }

  function cors(origin: string | undefined): Headers {
    if (!origin) return {};
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE_HEADERS, Vary: 'Origin' };
  }

  return {
    close: () => modern.close(),
    handle(res, req) {
      const method = req.getCaseSensitiveMethod().toUpperCase();
      const path = req.getUrl();
      const origin = req.getHeader('origin') || undefined;

      if (path === PRM_PATH || path === `${PRM_PATH}/mcp`) {
        const headers = { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' };
        if (method === 'OPTIONS')
          return sendEmpty(res, 204, {
            ...headers,
            'Access-Control-Allow-Methods': 'GET, OPTIONS',
            'Access-Control-Allow-Headers': ALLOW_HEADERS,
            'Access-Control-Max-Age': '600',
          });
        if (method !== 'GET' && method !== 'HEAD')
          return sendRpcError(res, 405, -32000, `${method} is not supported here; use GET.`, { ...headers, Allow: 'GET, OPTIONS' });
        return sendResponse(
          res,
          200,
          { 'Content-Type': 'application/json; charset=utf-8', ...headers },
          JSON.stringify(metadataFor(path === PRM_PATH ? '/' : '/mcp')),
          { head: method === 'HEAD' },
        );
      }
      if (path !== '/' && path !== '/mcp') {
        // Not an MCP endpoint at all: the service's own error shape, as every host answers.
        return sendError(res, new ServiceError('not_found', `No MCP endpoint at ${path}. The MCP server is at ${base}/mcp (and ${base}/).`), log, {
          head: method === 'HEAD',
        });
      }
      const endpoint: '/' | '/mcp' = path;
      if (!isAllowedOrigin(origin, policy)) {
        log.info({ origin }, 'mcp.origin_refused');
        return sendRpcError(res, 403, -32000, `Requests from the origin ${origin} are not allowed.`);
      }
      if (method === 'OPTIONS') {
        return sendEmpty(res, 204, {
          ...cors(origin),
          'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
          'Access-Control-Allow-Headers': ALLOW_HEADERS,
          'Access-Control-Max-Age': '600',
        });
      }
      if (method !== 'POST') {
        // Stateless: no standalone event stream to GET and no session to DELETE.
        return sendRpcError(res, 405, -32000, 'This MCP server is stateless: send every message with POST.', { ...cors(origin), Allow: 'POST, OPTIONS' });
      }

      const copied = copyRequest(res, req);
      const headers = copied.headers;
      const network = clientNetwork(copied, config.deploy.trustProxy);
      trackAbort(res);
      const intake = receiveBody(res, { limit, declaredBytes: declaredLength(headers), spool, pacer: options.pacer });
      const controller = new AbortController();
      trackAbort(res, () => controller.abort());

      void (async () => {
        try {
          if (intake.refused) throw intake.refused;
          let caller: Caller;
          try {
            caller = await ops.admission.admit({
              authorization: headers.authorization,
              network,
              surface: 'mcp',
              resolveOAuth: (token) => ops.oauth.resolveAccessToken(token, Object.values(resources)),
            });
            if (caller.kind === 'anonymous')
              throw new ServiceError('unauthorized', 'This MCP server needs a token.', {
                agentMessage: 'Connect with OAuth (the client discovers it from this answer), or send an API token as "Authorization: Bearer pl_…".',
              });
          } catch (err) {
            return await refuse(err, headers.authorization !== undefined && headers.authorization !== '');
          }

          const message = await parseInTurn(await intake.done);
          if (message === undefined) return send(400, rpcError(-32700, 'Parse error: the body is not valid JSON.'));
          if (Array.isArray(message.parsed)) {
            // Decided here, before the SDK sees the batch: its transport serves any batch of up to
            // 100 messages whatever revision the client speaks.
            const verdict = judgeBatch(message.parsed, headers['mcp-protocol-version']?.trim(), config.mcp.maxBatchMessages);
            if (!verdict.ok) {
              log.debug({ messages: message.parsed.length }, 'mcp.batch_refused');
              return send(400, rpcError(-32600, verdict.message));
            }
            // Every message of a batch is a call the rate limits count, not one per HTTP request.
            try {
              await ops.admission.admitBatch({ caller, network, calls: verdict.calls });
            } catch (err) {
              return await refuse(err, true);
            }
          }

          const context: ToolContext = { ops, caller, network, deployArguments: message.deployArguments, signal: controller.signal };
          const forwarded = new globalThis.Headers();
          for (const name in headers) if (!HOP_HEADERS.has(name)) forwarded.set(name, headers[name]!);
          const response = await serveMessage(new Request(`${base}${endpoint}`, { method: 'POST', headers: forwarded, signal: controller.signal }), {
            parsedBody: message.parsed,
            // The per-request tool context rides along to the server (see `serverFor`).
            authInfo: { token: '', clientId: caller.kind === 'account' ? caller.account.id : 'site', scopes: [MCP_SCOPE], extra: { context } },
          });
          const out: Headers = { ...cors(origin), 'Cache-Control': 'no-store' };
          response.headers.forEach((value, name) => {
            out[name] = value;
          });
          if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream') && response.body) {
            return await streamEvents(res, response, out, controller);
          }
          const text = response.status === 202 || response.body === null ? '' : await response.text();
          sendResponse(res, response.status, out, text);
        } catch (err) {
          if (isAborted(res)) return;
          // A body over the limit or too slow, a full disk: the REST API's words, in tool words.
          const { status, body: errorBody, headers: extra, internal } = toErrorBody(err);
          if (internal) log.error({ err }, 'mcp.failed');
          const finished = await intake.drain();
          const known = errorBody.error.code !== 'internal';
          sendRpcError(
            res,
            status,
            internal ? -32603 : -32600,
            inToolWords(errorBody.error.message),
            { ...cors(origin), ...extra },
            {
              close: !finished,
              ...(known ? { data: dataOf(err) } : {}),
            },
          );
        } finally {
          intake.discard();
        }

        function send(status: number, payload: unknown, extra: Headers = {}): void {
          sendResponse(
            res,
            status,
            { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...cors(origin), ...extra },
            JSON.stringify(payload),
          );
        }

        /** 401 with the discovery pointer (RFC 9728 §5.1), or the admission's own refusal (429). */
        async function refuse(err: unknown, sentToken: boolean): Promise<void> {
          const finished = await intake.drain();
          const { status, body: errorBody, headers: extra } = toErrorBody(err);
          if (status === 401) {
            const challenge = sentToken
              ? `Bearer error="invalid_token", error_description="${errorBody.error.message.replace(/"/g, "'")}", resource_metadata="${metadataUrl(endpoint)}", scope="${MCP_SCOPE}"`
              : `Bearer resource_metadata="${metadataUrl(endpoint)}", scope="${MCP_SCOPE}"`;
            return sendRpcError(
              res,
              401,
              -32001,
              errorBody.error.message,
              { ...cors(origin), 'WWW-Authenticate': challenge },
              { close: !finished, data: dataOf(err) },
            );
          }
          sendRpcError(res, status, -32000, errorBody.error.message, { ...cors(origin), ...extra }, { close: !finished, data: dataOf(err) });
        }
      })();
    },
  };
}

/** A message parsed, and a large `deploy_site` call's arguments left as they arrived. */
interface Message {
  parsed: unknown;
  /** The `deploy_site` arguments of a large call, unparsed, for the ingest worker (see envelope.ts). */
  deployArguments?: DeployBody;
}

/**
 * The parsed message, or undefined for invalid JSON. A large `deploy_site` call is split: only its
 * envelope is parsed, and its arguments' bytes go to the ingest worker as REST's JSON body does,
 * from memory or as a range of the spool file.
 */
async function parseMessage(body: ReceivedBody): Promise<Message | undefined> {
  const bytes = body.data ?? (await readFile(body.spoolPath));
  if (body.bytes > SPLIT_MIN_BYTES) {
    const split = splitArguments(bytes);
    const params = split?.envelope.params as { name?: unknown } | undefined;
    if (split && split.envelope.method === 'tools/call' && params?.name === 'deploy_site') {
      const [start, end] = split.argumentsRange;
      const deployArguments: DeployBody =
        body.data !== undefined
          ? { data: body.data.subarray(start, end), bytes: end - start }
          : { spoolPath: body.spoolPath, range: { start, end }, bytes: end - start };
      return { parsed: split.envelope, deployArguments };
    }
  }
  try {
    return { parsed: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return undefined;
  }
}

/** A JSON-RPC error's data: the REST code, agent message, and the seconds of `Retry-After` (429, 503) as `retry_after`. */
function dataOf(err: unknown): Record<string, unknown> {
  const { body, headers } = toErrorBody(err);
  const wait = Number(headers['Retry-After']);
  return {
    code: body.error.code,
    ...(body.agent_message ? { agent_message: inToolWords(body.agent_message) } : {}),
    ...(Number.isInteger(wait) && wait >= 0 ? { retry_after: wait } : {}),
  };
}

function rpcError(code: number, message: string, data?: Record<string, unknown>): unknown {
  return { jsonrpc: '2.0', id: null, error: { code, message, ...(data ? { data } : {}) } };
}

function sendRpcError(
  res: HttpResponse,
  status: number,
  code: number,
  message: string,
  headers: Headers = {},
  options: { close?: boolean; data?: Record<string, unknown> } = {},
): void {
  sendResponse(
    res,
    status,
    { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    JSON.stringify(rpcError(code, message, options.data)),
    {
      closeConnection: options.close,
    },
  );
}

/**
 * An answer that is an event stream (a 2026-07-28 `subscriptions/listen`, or a call whose
 * handler sent something before its result): relayed as it comes, until either side ends it.
 */
async function streamEvents(res: HttpResponse, response: Response, headers: Headers, controller: AbortController): Promise<void> {
  const reader = response.body!.getReader();
  controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  if (isAborted(res)) return void reader.cancel();
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    for (const name in headers) res.writeHeader(name, headers[name]!);
  });
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (isAborted(res)) return;
    if (done) {
      res.cork(() => res.end());
      markFinished(res);
      return;
    }
    res.cork(() => res.write(value));
  }
}

function sendEmpty(res: HttpResponse, status: number, headers: Headers): void {
  sendResponse(res, status, headers, '');
}
