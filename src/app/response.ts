import { type HttpResponse, sendResponse } from '../http/index.js';

/** A whole answer of the app host: built by a handler, written once by the edge. */
export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  /** `Set-Cookie` values, one header each. */
  cookies: string[];
  body: string | Buffer;
}

export function htmlResponse(body: string, status = 200): AppResponse {
  return { status, headers: { 'Content-Type': 'text/html; charset=utf-8' }, cookies: [], body };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): AppResponse {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers }, cookies: [], body: JSON.stringify(body) };
}

/** Post/redirect/get: after a POST, a 303 to the page that shows the result. */
export function redirect(location: string, status = 303): AppResponse {
  return { status, headers: { Location: location }, cookies: [], body: '' };
}

/** Writes the response in one cork, unless the client has gone (the shared writer marks it answered). */
export function writeAppResponse(res: HttpResponse, response: AppResponse, options: { head?: boolean; closeConnection?: boolean } = {}): void {
  sendResponse(res, response.status, response.headers, response.body, { ...options, cookies: response.cookies });
}
