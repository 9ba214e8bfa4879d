import { copyRequest, type HttpRequest, type HttpResponse, type RequestCopy } from '../http/index.js';

/** What an API handler may use after its first await. */
export interface ApiRequest extends RequestCopy {
  /** Values captured by the route pattern. */
  params: readonly string[];
}

export function readRequest(res: HttpResponse, req: HttpRequest, params: readonly string[]): ApiRequest {
  return { ...copyRequest(res, req), params };
}
