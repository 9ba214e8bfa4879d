/**
 * What the service sends out, each behind a small interface that the process wiring injects into
 * the operations (OperationsDeps): e-mail and the words of each message, OAuth client metadata
 * documents fetched from the client's URL, DNS TXT lookups of custom domains, and webhook deliveries. The operations
 * call these interfaces and never open a connection themselves; tests pass their own.
 */
export { createMailer, type Mail, type Mailer, type MailerOptions } from './mailer.js';
export { inviteMail, reportNoticeMail, reportReceiptMail, signInMail } from './mail-templates.js';
export { CLIENT_METADATA_UNAVAILABLE, createClientMetadataFetcher, type ClientMetadataFetcher, type ClientMetadataFetchOptions } from './client-metadata.js';
export { createTxtLookup, type TxtAnswer, type TxtLookup } from './txt-lookup.js';
export {
  createWebhookTransport,
  WEBHOOK_REFUSED_ADDRESS,
  WEBHOOK_URL_MAX_CHARS,
  type WebhookAttempt,
  type WebhookTransport,
  type WebhookTransportOptions,
} from './webhook-transport.js';
