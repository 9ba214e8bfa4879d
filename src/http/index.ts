/**
 * The uWS edge kit shared by every host: the native binding, request copies, routing, body
 * readers and writers, abort tracking, upload pacing and the client's network.
 */
export * from './client-network.js';
export * from './response.js';
export * from './route-template.js';
export * from './upload-pacer.js';
export * from './uws.js';
