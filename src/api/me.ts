import { requireAccount } from './access.js';
import type { Endpoint, EndpointDeps } from './handler.js';

/** `GET /v1/me` (SPEC 4.4): the account behind the API token and its site allowance. */
export function meEndpoint(deps: EndpointDeps): Endpoint {
  const { store, config } = deps;
  return async ({ caller }) => {
    const account = requireAccount(caller, 'GET /v1/me');
    return {
      status: 200,
      body: {
        email: account.email,
        plan: account.plan,
        sites_used: store.countOwnedSites(account.id),
        sites_limit: config.api.sitesLimit[account.plan],
      },
    };
  };
}
