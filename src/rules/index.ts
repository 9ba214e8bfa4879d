/**
 * Domain rules every area shares: plans and their limits, content types, site paths, roles,
 * e-mail syntax, expiry. Pure values and functions that import nothing of ours, so the store,
 * serving, ingest and the operations can all use the one home of each rule.
 */
export * from './content-types.js';
export * from './email.js';
export * from './encodings.js';
export * from './expiry.js';
export * from './html-escape.js';
export * from './plans.js';
export * from './roles.js';
export * from './site-paths.js';
export * from './site-names.js';
export * from './size-advice.js';
export * from './dns-label.js';
export * from './domains.js';
export * from './rule-patterns.js';
export * from './rules-file.js';
export * from './redirects-file.js';
export * from './headers-file.js';
export * from './site-rules.js';
export * from './site-resolve.js';
export * from './history-reach.js';
export * from './webhook-rules.js';
export * from './preview-host.js';
export * from './site-access.js';
export * from './closest-name.js';
export * from './proxy-trust.js';
export * from './rule-index.js';
export * from './preview-links.js';
export * from './rate-window.js';
export * from './fetchable-address.js';
export * from './oauth.js';
export * from './device-codes.js';
export * from './idempotency-key.js';
export * from './analytics.js';
export * from './process-slots.js';
