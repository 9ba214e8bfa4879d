import { WEBHOOK_EVENTS } from '../rules/index.js';
import { arrayOf, constant, enumOf, int, nullable, object, str, time, type Schema } from './schema-kit.js';

/** The JSON of the audit log and of webhooks (docs/audit-log.md, docs/webhooks.md), listed in shapes.ts's SHAPES. */

const details: Schema = {
  type: 'object',
  description: 'The facts of the event (revision, e-mail, domain, …): strings, numbers and booleans; for `anonymous`, its `network`.',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
};

export const Event = object(
  {
    kind: str('What happened: `deploy.published`, `member.invited`, `token.created`, … (docs/audit-log.md lists them).'),
    at: time('When.'),
    actor: str('Who: the e-mail of an account, or `site_token`, `anonymous`, `operator`, `system`.'),
    site: str('The site, by its name at the time.'),
    details,
  },
  ['kind', 'at', 'actor', 'details'],
);
export const EventList = object({
  events: arrayOf(Event, 'Newest first.'),
  next_cursor: nullable(str(), 'Pass as `cursor` for the next page; null on the last.'),
});

const webhookEvent = enumOf(WEBHOOK_EVENTS);
const webhookProperties = {
  id: str(undefined, { pattern: '^wh_' }),
  url: str('Where deliveries are posted.'),
  events: arrayOf(webhookEvent),
  created_at: time(),
  state: enumOf(['active', 'disabled'] as const, '`disabled`: nothing more is sent; `disabled_for` says why.'),
  disabled_at: time(),
  disabled_for: enumOf(
    ['failures', 'claim'] as const,
    '`failures`: too many deliveries in a row were given up on. `claim`: the site token registered it, and the site was claimed (it heard the claim itself).',
  ),
  failures: int('Deliveries given up on in a row.'),
};
const WEBHOOK_REQUIRED = ['id', 'url', 'events', 'created_at', 'state', 'failures'] as const;
export const Webhook = object(webhookProperties, WEBHOOK_REQUIRED);
export const WebhookCreated = object(
  { ...webhookProperties, secret: str('`whsec_…`: the key receivers verify signatures with. Shown only in this answer.', { pattern: '^whsec_' }) },
  [...WEBHOOK_REQUIRED, 'secret'],
);
export const WebhookList = object({ webhooks: arrayOf(Webhook) });
export const WebhookDeleted = object({ id: webhookProperties.id, deleted: constant(true) });

export const Delivery = object(
  {
    id: str('The `webhook-id` header, the same on every attempt.', { pattern: '^msg_' }),
    event: webhookEvent,
    state: enumOf(['pending', 'delivered', 'failed'] as const, '`failed`: given up on.'),
    attempts: int(),
    created_at: time(),
    next_attempt_at: time(),
    last_attempt_at: time(),
    last_status: int("The receiver's status at the last attempt."),
    last_error: str('Why the last attempt had no answer, or why it was not made.'),
  },
  ['id', 'event', 'state', 'attempts', 'created_at'],
);
export const DeliveryList = object({ deliveries: arrayOf(Delivery, 'Newest first, at most 100.') });

/** The body of every webhook delivery (docs/webhooks.md), as Standard Webhooks describes it. */
export const WebhookPayload = object({
  type: webhookEvent,
  timestamp: time('When the event happened.'),
  data: {
    type: 'object',
    description: "The site, who made the change, and the event's details as the audit log names them.",
    properties: {
      site: object({ name: str(), url: str() }),
      actor: str('As the audit log names them: an e-mail address, `site_token`, `anonymous`, `operator` or `system`.'),
    },
    required: ['site', 'actor'],
    additionalProperties: { type: ['string', 'number', 'boolean'] },
  },
});
