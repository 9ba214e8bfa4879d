import type { AddWebhookBody } from '../contract/index.js';
import type { RouteHandle } from './route.js';

const page = (query: URLSearchParams) => ({ limit: query.get('limit') ?? undefined, cursor: query.get('cursor') ?? undefined });

/** The audit log and webhooks (docs/audit-log.md, docs/webhooks.md); every rule lives in the operations. */
export const eventEndpoints = {
  siteEvents: async ({ ops, caller, request }) => ({ status: 200, body: ops.events.forSite(caller, request.params[0]!, page(request.query)) }),
  myEvents: async ({ ops, caller, request }) => ({ status: 200, body: ops.events.forAccount(caller, page(request.query)) }),
  addWebhook: async ({ ops, caller, request, body }) => {
    const fields = body as AddWebhookBody;
    return { status: 201, body: await ops.webhooks.create(caller, request.params[0]!, { url: fields.url, events: fields.events }) };
  },
  listWebhooks: async ({ ops, caller, request }) => ({ status: 200, body: ops.webhooks.list(caller, request.params[0]!) }),
  removeWebhook: async ({ ops, caller, request }) => ({ status: 200, body: await ops.webhooks.remove(caller, request.params[0]!, request.params[1]!) }),
  listDeliveries: async ({ ops, caller, request }) => ({
    status: 200,
    body: await ops.webhooks.deliveries(caller, request.params[0]!, request.params[1]!),
  }),
} satisfies Record<string, RouteHandle>;
