/**
 * The uWS edge kit shared by every host: the native binding, request copies, routing, the one
 * body intake, writers, abort tracking, upload pacing, the client's network, and the one set of
 * HTTP rules (negotiation, conditional requests, ranges, cookies, security headers).
 */
export * from './client-network.js';
export * from './http-rules.js';
export * from './security-headers.js';
export * from './abort.js';
export * from './body-memory.js';
export { declaredLength, IntakeError, receiveBody, type BodyLimit, type Intake, type IntakeOptions, type ReceivedBody } from './intake.js';
export { isMultipartForm, receiveForm, type FormHead, type FormIntake, type FormOptions, type ReceivedFile } from './form-intake.js';
export * from './request.js';
export * from './respond.js';
export * from './response-meter.js';
export { exactBytes, HEADER_NAMES, headerNameText } from './header-names.js';
export { loggedPath } from './logged-path.js';
export * from './send-body.js';
export * from './router.js';
export * from './upload-pacer.js';
export * from './uws.js';
