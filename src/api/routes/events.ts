import { BODIES } from '../../contract/index.js';
import { eventEndpoints as e } from '../event-endpoints.js';
import { answer, pathParam, type ApiRoute } from '../route.js';
import { nameParam, pageParams, SITE_READ } from './params.js';

const webhookParam = pathParam('id', 'The webhook id (`wh_…`).', { type: 'string', pattern: '^wh_' });

/** The audit log of sites and accounts, and sites' webhooks (docs/audit-log.md, docs/webhooks.md). */
export const eventRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/v1/sites/{name}/events',
    operationId: 'listSiteEvents',
    summary: "The site's audit log",
    description:
      "Members (and an unclaimed site's token). Who changed what and when: deploys, rollbacks, members, access, domains, deletion, webhooks; newest first, kept for the plan's history reach.",
    tag: 'Events',
    auth: ['site', 'api'],
    parameters: [nameParam, ...pageParams],
    responses: { 200: answer('EventList', 'Newest first.') },
    errors: ['bad_request', ...SITE_READ],
    handle: e.siteEvents,
  },
  {
    method: 'GET',
    path: '/v1/me/events',
    operationId: 'listMyEvents',
    summary: "The account's audit log",
    description:
      "API tokens created and revoked, devices approved, sign-ins, and the changes the account made to sites; newest first, kept for the plan's history reach.",
    tag: 'Events',
    auth: ['api'],
    parameters: [...pageParams],
    responses: { 200: answer('EventList', 'Newest first.') },
    errors: ['bad_request', 'forbidden'],
    handle: e.myEvents,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/webhooks',
    operationId: 'addWebhook',
    summary: 'Register a webhook',
    description:
      "Owners (and an unclaimed site's token). Deliveries are signed as Standard Webhooks describes; the answer's `secret` is shown only here. A URL that is not https, or whose name leads to an internal address, is `400`.",
    tag: 'Events',
    auth: ['site', 'api'],
    parameters: [nameParam],
    body: { schema: BODIES.AddWebhook },
    responses: { 201: answer('WebhookCreated', 'Registered; keep the secret.') },
    errors: SITE_READ,
    handle: e.addWebhook,
  },
  {
    method: 'GET',
    path: '/v1/sites/{name}/webhooks',
    operationId: 'listWebhooks',
    summary: "The site's webhooks",
    description: 'Owners. Each with its state: `disabled` once too many deliveries in a row were given up on.',
    tag: 'Events',
    auth: ['site', 'api'],
    parameters: [nameParam],
    responses: { 200: answer('WebhookList', 'Oldest first.') },
    errors: SITE_READ,
    handle: e.listWebhooks,
  },
  {
    method: 'DELETE',
    path: '/v1/sites/{name}/webhooks/{id}',
    operationId: 'removeWebhook',
    summary: 'Remove a webhook',
    description: 'Owners. Deliveries still waiting are not sent.',
    tag: 'Events',
    auth: ['site', 'api'],
    parameters: [nameParam, webhookParam],
    responses: { 200: answer('WebhookDeleted', 'Removed.') },
    errors: SITE_READ,
    handle: e.removeWebhook,
  },
  {
    method: 'GET',
    path: '/v1/sites/{name}/webhooks/{id}/deliveries',
    operationId: 'listDeliveries',
    summary: "A webhook's deliveries",
    description: 'Owners. Each delivery with its attempts, the last status and when the next attempt is due; newest first.',
    tag: 'Events',
    auth: ['site', 'api'],
    parameters: [nameParam, webhookParam],
    responses: { 200: answer('DeliveryList', 'Newest first.') },
    errors: SITE_READ,
    handle: e.listDeliveries,
  },
];
