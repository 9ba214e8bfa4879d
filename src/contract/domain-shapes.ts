import { SHOWN_DOMAIN_STATUSES } from '../rules/index.js';
import { arrayOf, bool, constant, enumOf, object, str, time, type JsonOf } from './schema-kit.js';

/** The JSON of custom domains (docs/sites-api.md "Custom domains"), listed in shapes.ts's SHAPES. */

const DOMAIN = '^[a-z0-9.-]{3,253}$';

export const DnsRecord = object(
  {
    type: enumOf(['TXT', 'CNAME', 'ALIAS'] as const, 'Record type. `ALIAS` stands for ALIAS, ANAME or a flattened CNAME, whatever the DNS host calls it.'),
    name: str('Full name of the record.'),
    value: str('What the record holds or points to.'),
  },
  undefined,
  'One DNS record to create at the DNS host of the domain.',
);

const domainProperties = {
  domain: str('The domain, in lower-case ASCII (internationalised names in punycode).', { pattern: DOMAIN }),
  status: enumOf(
    SHOWN_DOMAIN_STATUSES,
    '`pending` until the TXT record is found; `active` is served and gets a certificate; `failed` or `suspended` say why in `reason`; `taken`: another site verified the domain first and serves it, so this claim waits.',
  ),
  reason: str('Why the last check failed, or why the domain is taken.'),
  primary: bool('Of `example.org` and `www.example.org`, the one the other redirects to.'),
  redirect_site_address: bool("With `primary`: the site's own address redirects here too."),
  verification: object({ type: constant('TXT'), name: str('Where the TXT record goes.'), value: str('What it must hold.') }),
  target: str("The site's own host, which the domain's CNAME (or ALIAS) record points to."),
  records: arrayOf(DnsRecord, 'Every record to create.'),
  created_at: time(),
  verified_at: time('When the TXT record was last found.'),
  checked_at: time('When the TXT record was last looked up.'),
  agent_message: str(
    'In a listing, only for a domain whose TXT record was not found when it had to be (`suspended`, `failed`, or `active` with the record missing): what happened and what to do, with the record to create.',
  ),
};
const REQUIRED = ['domain', 'status', 'primary', 'redirect_site_address', 'verification', 'target', 'records', 'created_at'] as const;

export const Domain = object(domainProperties, REQUIRED);
export const DomainResult = object({ ...domainProperties, agent_message: str() }, [...REQUIRED, 'agent_message']);
export const DomainList = object({ domains: arrayOf(Domain) });
export const DomainRemoved = object({ domain: domainProperties.domain, removed: constant(true) });

export type DomainView = JsonOf<typeof Domain>;
export type DomainResultView = JsonOf<typeof DomainResult>;
export type DomainListView = JsonOf<typeof DomainList>;
export type DomainRemovedView = JsonOf<typeof DomainRemoved>;
