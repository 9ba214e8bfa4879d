import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { MAX_JSON_BODY_BYTES, MAX_MCP_REQUEST_BYTES, MAX_REQUEST_BYTES } from '../rules/index.js';
import { formatBytes } from './limits.js';

/**
 * The limits a request body is held to, and the one refusal of each, written here once for every
 * edge: REST, MCP (which puts the REST calls in tool words) and the app alike. The edges hand a
 * limit to the HTTP intake, which refuses with these words.
 */
export interface BodyLimit {
  readonly maxBytes: number;
  /** The whole body must arrive within this long; 0: no bound (`PLINTH_UPLOAD_TIMEOUT_S`). */
  readonly deadlineMs: number;
  /** How long a refused body's client may send nothing while it is drained (`PLINTH_LINGER_IDLE_MS`). */
  readonly lingerIdleMs: number;
  tooLarge(): ServiceError;
  tooSlow(): ServiceError;
}

/** Room for the JSON-RPC framing around an MCP request's 40 MB of files (SPEC 8 rule 2). */
export const MCP_FRAMING_BYTES = 256 * 1024;

const PARTS_ADVICE = 'describe every file with POST /v1/deploy/manifest, then upload the contents it lists as missing to POST /v1/deploy?manifest=<id>';

/**
 * One request (SPEC 8 rule 2): a deploy, a drop on the app, any MCP message. 90 MB, and 40 MB
 * through MCP (with room for its framing).
 */
export function requestBodyLimit(config: Readonly<Config>, surface: 'rest' | 'mcp'): BodyLimit {
  const allowed = surface === 'mcp' ? MAX_MCP_REQUEST_BYTES : MAX_REQUEST_BYTES;
  return {
    maxBytes: surface === 'mcp' ? allowed + MCP_FRAMING_BYTES : allowed,
    deadlineMs: config.deploy.uploadTimeoutMs,
    lingerIdleMs: config.deploy.lingerIdleMs,
    tooLarge: () => requestTooLarge(allowed),
    tooSlow: () => bodyTooSlow(config.deploy.uploadTimeoutMs),
  };
}

/** A JSON body of an endpoint other than deploy, or a form of the app: small (`maxBytes`, 64 KB unless the endpoint says). */
export function smallBodyLimit(config: Readonly<Config>, maxBytes = MAX_JSON_BODY_BYTES): BodyLimit {
  return {
    maxBytes,
    deadlineMs: config.deploy.uploadTimeoutMs,
    lingerIdleMs: config.deploy.lingerIdleMs,
    tooLarge: () =>
      new ServiceError('too_large', `A request body here can be at most ${formatBytes(maxBytes)}.`, {
        agentMessage: 'Send only the fields this request takes, as its reference describes.',
      }),
    tooSlow: () => bodyTooSlow(config.deploy.uploadTimeoutMs),
  };
}

/** The refusal of a request over the one-request cap (`allowedBytes`: 90 MB, 40 MB through MCP). */
export function requestTooLarge(allowedBytes: number): ServiceError {
  const size = formatBytes(allowedBytes);
  return new ServiceError('too_large', `One request can carry at most ${size}.`, {
    agentMessage: `The upload is over ${size}. Send the site in parts, published at once as one revision: ${PARTS_ADVICE} in several requests of at most ${size} each (the plinth command does this by itself).`,
  });
}

/** The refusal of a body that did not arrive within the deadline (`PLINTH_UPLOAD_TIMEOUT_S`). */
export function bodyTooSlow(deadlineMs: number): ServiceError {
  const seconds = Math.round(deadlineMs / 1000);
  return new ServiceError('bad_request', `The request body did not arrive within ${seconds} seconds, so nothing was changed.`, {
    agentMessage: `Nothing was changed: the connection is too slow for a body this size. Send the same request again over a faster connection, or send a large site in parts: ${PARTS_ADVICE} in smaller requests.`,
  });
}
