import { BODIES } from '../../contract/index.js';
import { domainEndpoints as d } from '../domain-endpoints.js';
import { answer, type ApiRoute } from '../route.js';
import { domainParam, nameParam, SITE_READ } from './params.js';

/** Custom domains of a site (docs/sites-api.md "Custom domains"). */
export const domainRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/v1/sites/{name}/domains',
    operationId: 'listDomains',
    summary: 'Custom domains of a site',
    description: 'Members with account credentials. Each domain with its status, the reason of a failed check, and the DNS records it needs.',
    tag: 'Domains',
    auth: ['api'],
    parameters: [nameParam],
    responses: { 200: answer('DomainList', 'Domains in name order.') },
    errors: SITE_READ,
    handle: d.listDomains,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/domains',
    operationId: 'addDomain',
    summary: 'Attach a custom domain',
    description:
      'Owners with account credentials. The domain starts `pending`; `agent_message` and `records` say which DNS records to create. ' +
      "A domain another site holds active is `409`; over the plan's cap (or on a plan without domains) `429`. " +
      'Posting a domain the site has already changes `primary` and `redirect_site_address` and answers `200`.',
    tag: 'Domains',
    auth: ['api'],
    parameters: [nameParam],
    body: { schema: BODIES.AddDomain },
    responses: {
      200: answer('DomainResult', 'The site had the domain already; `primary` changed as asked.'),
      201: answer('DomainResult', 'Attached, pending verification.'),
    },
    errors: ['conflict', ...SITE_READ],
    handle: d.addDomain,
  },
  {
    method: 'DELETE',
    path: '/v1/sites/{name}/domains/{domain}',
    operationId: 'removeDomain',
    summary: 'Detach a custom domain',
    description: 'Owners with account credentials. The domain stops being served at once.',
    tag: 'Domains',
    auth: ['api'],
    parameters: [nameParam, domainParam],
    responses: { 200: answer('DomainRemoved', 'Detached.') },
    errors: SITE_READ,
    handle: d.removeDomain,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/domains/{domain}/verify',
    operationId: 'verifyDomain',
    summary: 'Check the TXT record now',
    description:
      'Owners with account credentials. Looks the `_plinth-challenge` TXT record up and answers the domain with its new status (the reason when it is not active).',
    tag: 'Domains',
    auth: ['api'],
    parameters: [nameParam, domainParam],
    // A body is read (and ignored), so a client may post `{}`.
    body: {},
    responses: { 200: answer('DomainResult', 'Checked; see `status` and `reason`.') },
    errors: SITE_READ,
    handle: d.verifyDomain,
  },
];
