import { WEBHOOK_EVENTS } from '../rules/index.js';
import { arrayOf, bool, enumOf, object, str, type JsonOf } from './schema-kit.js';

/**
 * The small JSON bodies of the REST routes on one site, each written once (see fastify's route
 * `schema`): the route declares it as its body and checks every request against it before the
 * operation runs, the OpenAPI document shows it inline, and the MCP tool that calls the same
 * operation takes the same fields beside `site` and checks them the same way. A field's rule
 * changed here changes both edges at once.
 */

const revisionId = (description: string) => str(description, { pattern: '^rev_' });

export const BODIES = {
  SiteAccessChange: {
    minProperties: 1,
    ...object(
      {
        mode: { type: 'string', enum: ['public', 'password', 'members'] },
        password: str('With `mode: "password"`.', { minLength: 8, maxLength: 128 }),
        previews: { type: 'string', enum: ['public', 'members'], description: 'Who may see the previews while the site is public.' },
      },
      [],
    ),
  },
  Rollback: object({ revision: revisionId('Revision id to restore.') }),
  Promote: object({ revision: revisionId('Revision id to make live.'), base_revision: revisionId('The live revision id it replaces.') }),
  Rename: object({ name: str('4–63 characters of a-z, 0-9 and -.', { minLength: 4, maxLength: 63 }) }),
  // The address's syntax is the operation's rule (rules/email.ts), which says what is wrong with it.
  Invite: object({ email: str(undefined, { format: 'email' }), role: enumOf(['editor', 'viewer']) }),
  // The domain's syntax too: the operation normalises it (case, a trailing dot, punycode) first.
  AddDomain: object(
    {
      domain: str('Domain name; internationalised names are stored in punycode.'),
      primary: bool('Of an apex/www pair, the one the other redirects to.'),
      redirect_site_address: bool("With `primary`: the site's own address redirects to this domain."),
    },
    ['domain'],
  ),
  // The URL's rules (https, a public address) are the operation's, which checks where it leads.
  AddWebhook: object(
    {
      url: str('The https address deliveries are posted to.', { minLength: 1, maxLength: 2000 }),
      events: { ...arrayOf(enumOf(WEBHOOK_EVENTS), 'The events to receive.'), minItems: 1 },
    },
    ['url', 'events'],
  ),
} as const;

export type RollbackBody = JsonOf<typeof BODIES.Rollback>;
export type PromoteBody = JsonOf<typeof BODIES.Promote>;
export type RenameBody = JsonOf<typeof BODIES.Rename>;
export type InviteBody = JsonOf<typeof BODIES.Invite>;
export type AddDomainBody = JsonOf<typeof BODIES.AddDomain>;
export type AddWebhookBody = JsonOf<typeof BODIES.AddWebhook>;
