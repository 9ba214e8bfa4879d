import type { AddDomainBody } from '../contract/index.js';
import type { RouteHandle } from './route.js';

/** Custom domains of a site (docs/sites-api.md "Custom domains"); every rule lives in the operations, and the body arrives checked against its shape. */
export const domainEndpoints = {
  listDomains: async ({ ops, caller, request }) => ({ status: 200, body: ops.domains.list(caller, request.params[0]!) }),
  addDomain: async ({ ops, caller, request, body }) => {
    const fields = body as AddDomainBody;
    const { created, view } = await ops.domains.add(caller, request.params[0]!, {
      domain: fields.domain,
      primary: fields.primary,
      redirect_site_address: fields.redirect_site_address,
    });
    return { status: created ? 201 : 200, body: view };
  },
  removeDomain: async ({ ops, caller, request }) => ({ status: 200, body: await ops.domains.remove(caller, request.params[0]!, request.params[1]!) }),
  verifyDomain: async ({ ops, caller, request }) => ({ status: 200, body: await ops.domains.verify(caller, request.params[0]!, request.params[1]!) }),
} satisfies Record<string, RouteHandle>;
