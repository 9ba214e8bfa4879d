import { ServiceError } from '../errors.js';
import { DATABASE_ANSWER_MS, type AccountRecord, type RateCheck } from '../store/index.js';
import { identifyBearer, type Caller, type Surface } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { cap, MINUTE_MS, takeOrRefuse } from './rate.js';
import type { TokenOperations } from './tokens.js';

export interface AdmitInput {
  /** The `Authorization` header value, if any. */
  authorization: string | undefined;
  /** The client's network (IPv4 /24, IPv6 /64). */
  network: string;
  surface: Surface;
  /** Recognises OAuth access tokens on the MCP surface. */
  resolveOAuth?: (token: string) => AccountRecord | undefined;
}

export interface BatchInput {
  /** The caller `admit` returned for the request carrying the batch. */
  caller: Caller;
  network: string;
  /** How many messages the batch carries. */
  calls: number;
}

export interface Admission {
  /**
   * Who is calling, after counting the request against the per-network and per-credential
   * limits (`PLINTH_API_RATE_PER_*`). A request with a bad token still counts against its
   * network, so guessing tokens is capped too.
   */
  admit(input: AdmitInput): Promise<Caller>;
  /**
   * Counts a JSON-RPC batch as the calls it carries: `admit` counted its request as one, this
   * counts the other `calls - 1` against the same limits, all or none, else `429 limit`.
   */
  admitBatch(input: BatchInput): Promise<void>;
  /**
   * In a cluster, brings this node's replica up to every change PostgreSQL had committed when
   * the call was made, so that a request decides on what any node acknowledged before it arrived:
   * a client behind a load balancer without sticky sessions sees its own writes wherever its next
   * request lands. `admit` does it first; the deploy edge, which does not `admit`, and the account
   * app call it themselves. Never fails: while PostgreSQL is away or slow (past about a second),
   * the request goes on with the replica as it is, as serving does. Does nothing outside a cluster.
   */
  catchUp(): Promise<void>;
}

/**
 * How long a request waits for its node's replica to catch up before going on without: a little
 * past the bound on PostgreSQL's answer, so that a PostgreSQL that hangs is known to before the
 * request goes on, and the write it makes fails at once (503) rather than waiting again.
 */
const CATCH_UP_WAIT_MS = DATABASE_ANSWER_MS + 250;

export function admission(deps: OperationsDeps, tokens: TokenOperations): Admission {
  const { store, config, log } = deps;

  function capsOf(network: string, caller: Caller | undefined): Array<RateCheck | undefined> {
    return [
      cap(`api-network:${network}`, config.api.ratePerNetworkPerMinute, MINUTE_MS),
      caller && caller.kind !== 'anonymous' ? cap(`api-credential:${caller.tokenHash}`, config.api.ratePerCredentialPerMinute, MINUTE_MS) : undefined,
    ];
  }

  async function catchUp(): Promise<void> {
    const cluster = store.cluster;
    if (cluster === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CATCH_UP_WAIT_MS);
    });
    const caughtUp = cluster.catchUp().then(
      () => undefined,
      (err: unknown) => log.debug({ err }, 'cluster.catch_up_failed'),
    );
    await Promise.race([caughtUp, waited]);
    clearTimeout(timer);
  }

  return {
    catchUp,

    async admit(input) {
      await catchUp();
      let caller: Caller | undefined;
      let refused: unknown;
      try {
        caller = identifyBearer(input.authorization, store, input.surface, input.resolveOAuth);
      } catch (err) {
        refused = err;
      }
      await takeOrRefuse(store, capsOf(input.network, caller), (seconds) => ({
        message: 'Too many API requests; slow down.',
        agentMessage: `The API rate limit was reached. Wait ${seconds} seconds (the Retry-After header) before the next request.`,
      }));
      if (refused !== undefined) throw refused;
      tokens.noteUse(caller!);
      return caller!;
    },

    async admitBatch({ caller, network, calls }) {
      if (calls <= 1) return;
      const caps = capsOf(network, caller);
      // Waiting would not help a batch larger than a whole minute's allowance: say so, without
      // a Retry-After that would send the client round again.
      const smallest = Math.min(...caps.map((check) => check?.limit ?? Infinity));
      if (calls > smallest) {
        throw new ServiceError('limit', `A batch of ${calls} calls is more than the ${smallest} requests a minute allowed.`, {
          agentMessage: `Each message of a batch counts as one request. Send at most ${smallest} messages in a batch, or one message per request.`,
        });
      }
      await takeOrRefuse(
        store,
        caps.map((check) => check && { ...check, hits: calls - 1 }),
        (seconds) => ({
          message: `Too many API requests for a batch of ${calls} calls; slow down.`,
          agentMessage: `The API rate limit was reached: each message of a batch counts as one request. Wait ${seconds} seconds (the Retry-After header), or send fewer messages.`,
        }),
      );
    },
  };
}
