/**
 * The uWS edge kit shared by every host: the native binding, request copies, routing, body
 * readers and writers, abort tracking, upload pacing and the client's network.
 */
export * from './client-network.js';
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
