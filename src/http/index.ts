/**
 * The uWS edge kit shared by every host: the native binding, request copies, routing, body
 * readers and writers, abort tracking, upload pacing, the client's network, and the one set of
 * HTTP rules (negotiation, conditional requests, ranges, cookies, security headers).
 */
export * from './client-network.js';
export * from './http-rules.js';
export * from './security-headers.js';
export * from './abort.js';
export * from './body-memory.js';
export * from './read-body.js';
export * from './request.js';
export * from './respond.js';
export * from './response-meter.js';
export * from './send-body.js';
export * from './router.js';
export * from './upload-pacer.js';
export * from './uws.js';
