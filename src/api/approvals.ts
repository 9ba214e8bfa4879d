import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { hashToken } from '../store/index.js';
import type { Endpoint, EndpointDeps } from './handler.js';
import { iso } from './views.js';

/**
 * `GET /v1/approvals/<token>` (SPEC 4.3): whether a requested deletion happened. The token is the
 * secret, so no credential is needed (one that is sent must still be valid, as everywhere).
 */
export function approvalEndpoint(deps: EndpointDeps): Endpoint {
  const { store, config } = deps;
  return async ({ request }) => {
    const token = request.params[0]!;
    const approval = store.getConfirmation(hashToken(token));
    if (approval?.kind !== 'delete_site') {
      throw new ServiceError('not_found', 'There is no deletion approval with this token.', {
        agentMessage: 'Use the approval token from the answer to DELETE /v1/sites/<name>, unchanged.',
      });
    }
    const site = store.getSiteById(approval.siteId);
    const status = approval.status === 'approved' ? 'approved' : approval.expiresAt <= deps.now() ? 'expired' : 'pending';
    const body: Record<string, unknown> = {
      status,
      site: site ? { name: site.name, url: siteUrl(config.publicUrls, site.name) } : null,
      expires_at: iso(approval.expiresAt),
    };
    if (status === 'approved' && approval.decidedAt !== undefined) body.deleted_at = iso(approval.decidedAt);
    if (status === 'pending') body.approve_url = `${config.publicUrls.app}/approve/${token}`;
    return { status: 200, body };
  };
}
