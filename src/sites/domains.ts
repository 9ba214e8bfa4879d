import { createHmac, randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { challengeName, isApex, parseDomain } from '../rules/index.js';
import type { DomainRecord, SiteRecord } from '../store/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import { checkDomain, isHeldElsewhere, recordDomainTransition } from './domain-checks.js';
import type { DomainListView, DomainRemovedView, DomainResultView, DomainView } from '../contract/index.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { iso } from './views.js';

/**
 * Custom domains of a site (issue 25): an owner with account credentials attaches a domain, gets
 * the DNS records to create, and asks for the TXT check; only an active domain is served and
 * certified. The verification value is an HMAC of the site id and the domain under a server
 * secret: the same for the same site whenever it is added again, different for any other site, so
 * a record left behind for one site never verifies another. Several sites may claim one domain at
 * once and nobody can remove another's claim; the first whose value is found in DNS gets it, and
 * the others are shown `taken` (in their listing and verify answers) until it lets go.
 */
export interface DomainOperations {
  list(caller: Caller, name: string): DomainListView;
  /** Attaches a domain (201), or updates `primary` of one the site has already (200). */
  add(
    caller: Caller,
    name: string,
    input: { domain: unknown; primary?: unknown; redirect_site_address?: unknown },
  ): Promise<{ created: boolean; view: DomainResultView }>;
  remove(caller: Caller, name: string, domain: string): Promise<DomainRemovedView>;
  /** Looks the TXT record up now and records the outcome. */
  verify(caller: Caller, name: string, domain: string): Promise<DomainResultView>;
}

const SECRET_NAME = 'domain-verification';

export function domainOperations(deps: OperationsDeps): DomainOperations {
  const { store, config, lookupTxt: lookup } = deps;
  const targetOf = (site: SiteRecord): string => new URL(siteUrl(config.publicUrls, site.name)).hostname;

  const tokenFor = async (siteId: string, domain: string): Promise<string> => {
    const secret = await store.ensureSecret(SECRET_NAME, () => randomBytes(32).toString('base64url'));
    return `plinth-verify=${createHmac('sha256', secret).update(`${siteId}\n${domain}`).digest('base64url').slice(0, 32)}`;
  };

  const takenReason = (record: DomainRecord): string =>
    `Another site verified ${record.domain} first and serves it now; a domain serves one site at a time. This site gets it only once the other site gives it up.`;

  const view = (record: DomainRecord, site: SiteRecord): DomainView => {
    const target = targetOf(site);
    const verification = { type: 'TXT' as const, name: challengeName(record.domain), value: record.token };
    const taken = isHeldElsewhere(store, record);
    const result: DomainView = {
      domain: record.domain,
      status: taken ? 'taken' : record.status,
      primary: record.primary,
      redirect_site_address: record.redirectSite === true,
      verification,
      target,
      records: [verification, { type: isApex(record.domain) ? 'ALIAS' : 'CNAME', name: record.domain, value: target }],
      created_at: iso(record.createdAt),
    };
    if (taken) result.reason = takenReason(record);
    else if (record.reason !== undefined) result.reason = record.reason;
    if (record.verifiedAt !== undefined) result.verified_at = iso(record.verifiedAt);
    if (record.checkedAt !== undefined) result.checked_at = iso(record.checkedAt);
    // A domain that lost its record, or never got it in time, says in the listing too what to do.
    const trouble = taken ? undefined : troubleOf(record, site);
    if (trouble !== undefined) result.agent_message = trouble;
    return result;
  };

  /**
   * What happened to a domain whose TXT record was not found when it had to be (suspended,
   * failed, or active with its record missing), and exactly what to do about it; undefined for
   * any other domain.
   */
  const troubleOf = (record: DomainRecord, site: SiteRecord): string | undefined => {
    const name = challengeName(record.domain);
    const verify = `POST /v1/sites/${site.name}/domains/${record.domain}/verify`;
    const found = record.reason ? ` The last check${record.checkedAt !== undefined ? ` (${iso(record.checkedAt)})` : ''} found: ${record.reason}` : '';
    const recreate = `${record.verifiedAt !== undefined ? 'add the TXT record again' : 'create the TXT record'} at the DNS host of ${record.domain}: named ${name}, with the value ${record.token}`;
    if (record.status === 'suspended') {
      return (
        `${record.domain} is suspended: it no longer serves ${site.name}, because its TXT verification record has not been found since ${iso(record.failingSince ?? record.checkedAt ?? deps.now())}.${found} ` +
        `To restore it, ${recreate}. Then check again with ${verify} (records can take minutes to appear). ` +
        `It serves ${site.name} again as soon as the record is found; the service also looks daily by itself.`
      );
    }
    if (record.status === 'failed') {
      const why =
        record.verifiedAt !== undefined
          ? `its TXT verification record is gone`
          : `its TXT verification record was not found within 7 days of adding it, and it is not looked up by itself any more`;
      return (
        `${record.domain} failed: it does not serve ${site.name}, because ${why}.${found} ` +
        `To use it, ${recreate} (and keep the ${isApex(record.domain) ? 'ALIAS' : 'CNAME'} record for ${record.domain} pointing to ${targetOf(site)}). Then check again with ${verify} (records can take minutes to appear).`
      );
    }
    if (record.status === 'active' && record.failingSince !== undefined) {
      return (
        `${record.domain} still serves ${site.name}, but its TXT verification record has not been found since ${iso(record.failingSince)}, and the domain is suspended if it is still missing on ${iso(record.failingSince + config.domains.graceMs)}.${found} ` +
        `To keep it, ${recreate}. Then check again with ${verify}.`
      );
    }
    return undefined;
  };

  const instructions = (record: DomainRecord, site: SiteRecord): string => {
    const target = targetOf(site);
    const verify = `POST /v1/sites/${site.name}/domains/${record.domain}/verify`;
    if (isHeldElsewhere(store, record)) {
      return (
        `${record.domain} is in use by another site, whose owner verified it first, so it does not serve ${site.name}. ` +
        `Tell the user: if the domain is theirs and should serve ${site.name}, it must first be removed from the other site. ` +
        `Then verify again with ${verify}. Otherwise remove it here with DELETE /v1/sites/${site.name}/domains/${record.domain}.`
      );
    }
    const trouble = troubleOf(record, site);
    if (trouble !== undefined) return trouble;
    if (record.status === 'active') {
      return `${record.domain} is active: it serves ${site.name} over HTTPS (the certificate is issued on the first visit). Keep the TXT record ${challengeName(record.domain)} in place; it is checked daily.`;
    }
    const pointer = isApex(record.domain)
      ? `an ALIAS (also called ANAME or CNAME flattening) record for ${record.domain} pointing to ${target}; if the DNS host has none, A and AAAA records with the addresses ${target} resolves to`
      : `a CNAME record for ${record.domain} pointing to ${target}`;
    const failed = record.reason ? ` Last check: ${record.reason}` : '';
    return (
      `Create these DNS records at the DNS host of ${record.domain}: a TXT record named ${challengeName(record.domain)} with the value ${record.token}, and ${pointer}. ` +
      `Then verify with ${verify} (records can take minutes to appear); the service also checks by itself for 7 days.${failed}`
    );
  };

  const findOwn = (site: SiteRecord, raw: string): DomainRecord => {
    const parsed = parseDomain(raw, config.hosts);
    const record = parsed.ok ? store.getDomainClaim(parsed.domain, site.id) : undefined;
    if (!record) {
      throw new ServiceError('not_found', `${site.name} has no custom domain ${raw.slice(0, 253)}.`, {
        agentMessage: `List the site's domains with GET /v1/sites/${site.name}/domains.`,
      });
    }
    return record;
  };

  return {
    list(caller, name) {
      const { site } = resolveSite(store, caller, name, 'list_members', deps.now());
      return { domains: store.listDomains(site.id).map((record) => view(record, site)) };
    },

    async add(caller, name, input) {
      // Owners with account credentials, as for managing members.
      const { site } = resolveSite(store, caller, name, 'manage_members', deps.now());
      const parsed = parseDomain(input.domain, config.hosts);
      if (!parsed.ok) throw new ServiceError('bad_request', parsed.problem, { details: { field: 'domain' } });
      const domain = parsed.domain;
      if (input.primary !== undefined && typeof input.primary !== 'boolean') throw new ServiceError('bad_request', '"primary" must be true or false.');
      const redirect = input.redirect_site_address;
      if (redirect !== undefined && typeof redirect !== 'boolean') throw new ServiceError('bad_request', '"redirect_site_address" must be true or false.');
      if (site.state === 'taken_down') throw new ServiceError('forbidden', `${site.name} was taken down for abuse and cannot get a domain.`);
      const maxPerSite = site.plan === 'anonymous' ? 0 : config.domains.perSite[site.plan];
      const added = await store.addDomain({ domain, siteId: site.id, token: await tokenFor(site.id, domain), maxPerSite });
      let record: DomainRecord;
      if (added.ok) record = added.record;
      else if (added.reason === 'exists') record = added.record;
      else if (added.reason === 'taken') {
        throw new ServiceError('conflict', `${domain} is already in use by another site.`, {
          agentMessage: `${domain} is attached to another site, which verified it. Its owner must remove it there first; a domain serves one site at a time.`,
        });
      } else if (added.reason === 'over_limit') {
        throw new ServiceError(
          'limit',
          maxPerSite === 0 ? `The ${site.plan} plan has no custom domains.` : `${site.name} has its ${maxPerSite} custom domains already.`,
          {
            agentMessage:
              maxPerSite === 0
                ? `Custom domains need another plan. The account owner can change plans in the account app.`
                : `Remove a domain (DELETE /v1/sites/${site.name}/domains/<domain>) or move to a larger plan to add another.`,
          },
        );
      } else throw new ServiceError('not_found', `There is no site named ${name}.`);
      if (input.primary !== undefined || redirect !== undefined) {
        const primary = input.primary ?? record.primary;
        record = (await store.setPrimaryDomain(site.id, domain, primary === true, redirect ?? record.redirectSite === true)) ?? record;
      }
      await recordEvent(deps, actorOf(caller), {
        kind: added.ok ? 'domain.added' : 'domain.changed',
        site,
        details: { domain, primary: record.primary === true, redirect_site_address: record.redirectSite === true },
      });
      return { created: added.ok, view: { ...view(record, site), agent_message: instructions(record, site) } };
    },

    async remove(caller, name, domain) {
      const { site } = resolveSite(store, caller, name, 'manage_members', deps.now());
      const record = findOwn(site, domain);
      await store.removeDomain(site.id, record.domain);
      await recordEvent(deps, actorOf(caller), { kind: 'domain.removed', site, details: { domain: record.domain } });
      return { domain: record.domain, removed: true };
    },

    async verify(caller, name, domain) {
      const { site } = resolveSite(store, caller, name, 'manage_members', deps.now());
      const record = findOwn(site, domain);
      // Held by another site's claim: no lookup could make this one active.
      if (isHeldElsewhere(store, record)) return { ...view(record, site), agent_message: instructions(record, site) };
      // Any status passes to active when the record is there; a failed domain stays failed otherwise.
      const checked = await checkDomain(store, lookup, record, deps.now, config.domains.graceMs);
      if (checked) await recordDomainTransition(deps, actorOf(caller), record, checked, site);
      if (!checked) {
        throw new ServiceError('not_found', `${record.domain} was removed from ${site.name} while it was being checked.`, {
          agentMessage: `List the site's domains with GET /v1/sites/${site.name}/domains.`,
        });
      }
      return { ...view(checked, site), agent_message: instructions(checked, site) };
    },
  };
}
