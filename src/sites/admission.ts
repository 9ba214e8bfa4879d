import type { AccountRecord } from '../store/index.js';
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

export interface Admission {
  /**
   * Who is calling, after counting the request against the per-network and per-credential
   * limits (`PLINTH_API_RATE_PER_*`). A request with a bad token still counts against its
   * network, so guessing tokens is capped too.
   */
  admit(input: AdmitInput): Promise<Caller>;
}

export function admission(deps: OperationsDeps, tokens: TokenOperations): Admission {
  const { store, config } = deps;
  return {
    async admit(input) {
      let caller: Caller | undefined;
      let refused: unknown;
      try {
        caller = identifyBearer(input.authorization, store, input.surface, input.resolveOAuth);
      } catch (err) {
        refused = err;
      }
      await takeOrRefuse(
        store,
        [
          cap(`api-network:${input.network}`, config.api.ratePerNetworkPerMinute, MINUTE_MS),
          caller && caller.kind !== 'anonymous' ? cap(`api-credential:${caller.tokenHash}`, config.api.ratePerCredentialPerMinute, MINUTE_MS) : undefined,
        ],
        (seconds) => ({
          message: 'Too many API requests; slow down.',
          agentMessage: `The API rate limit was reached. Wait ${seconds} seconds (the Retry-After header) before the next request.`,
        }),
      );
      if (refused !== undefined) throw refused;
      tokens.noteUse(caller!);
      return caller!;
    },
  };
}
