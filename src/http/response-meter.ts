import type { HttpResponse, RecognizedString } from './uws.js';

/**
 * Every response's status, body bytes and time, for metrics and the access log, whoever writes
 * it: the prepared hot path, `writeResponse`, streamed files, MCP's event streams. Rather than
 * instrument each writer, the methods that end a response (`end`, `endWithoutBody`, a `tryEnd`
 * that finishes, `close`, and an abort) are wrapped once on the prototype uWS gives every
 * HttpResponse, much as `on-finished` hooks Node's `res.end`. A response is measured only when
 * `begin` was called for it, so nothing changes for the rest; when no meter is made, nothing is
 * wrapped at all. The cost per request is a timer read at each end and a few property writes
 * (bench/RESULTS.md, "Metrics").
 */

/** How a measured response ended. `aborted`: the client went away, or the server cut it off. */
export type FinishedResponse<Detail> = (tag: number, status: number, bytes: number, ms: number, aborted: boolean, detail: Detail) => void;

export interface ResponseMeter<Detail> {
  /**
   * Measures `res` from now until it ends; `tag` (a host kind, say) and `detail` come back with
   * it. Call first thing in the handler, before anything is written.
   */
  begin(res: HttpResponse, tag: number, detail: Detail): void;
  /** Changes the tag of a response being measured (once its handler knows better). */
  retag(res: HttpResponse, tag: number): void;
}

/** What a measured response carries; set in this order for every response, so they share one shape. */
interface Metered extends HttpResponse {
  plinthFinish?: FinishedResponse<unknown>;
  plinthStart: number;
  plinthTag: number;
  plinthDetail: unknown;
  plinthStatus: number;
  plinthBytes: number;
}

// Each native method has parameters of its own; the wrappers below state them.
type Method = (this: Metered, ...args: any[]) => unknown;
const wrapped = new WeakSet<object>();
// The prototype last seen: every response of a thread has the same one, so the set is asked once.
let lastWrapped: object | undefined;

export function createResponseMeter<Detail>(onFinished: FinishedResponse<Detail>): ResponseMeter<Detail> {
  return {
    begin(res, tag, detail) {
      const metered = res as Metered;
      const proto = Object.getPrototypeOf(res) as object;
      if (proto !== lastWrapped) wrapOnce(proto);
      metered.plinthFinish = onFinished as FinishedResponse<unknown>;
      metered.plinthStart = performance.now();
      metered.plinthTag = tag;
      metered.plinthDetail = detail;
      metered.plinthStatus = 200;
      metered.plinthBytes = 0;
    },
    retag(res, tag) {
      (res as Metered).plinthTag = tag;
    },
  };
}

function finish(res: Metered, bytes: number, aborted: boolean): void {
  const onFinished = res.plinthFinish;
  if (onFinished === undefined) return;
  // Once only: a close or an abort may follow an end.
  res.plinthFinish = undefined;
  onFinished(res.plinthTag, res.plinthStatus, bytes, performance.now() - res.plinthStart, aborted, res.plinthDetail);
}

/** Body bytes of what uWS was handed. */
function sizeOf(body: RecognizedString | undefined): number {
  if (body === undefined) return 0;
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

/** "404 Not Found" → 404, read from the first three characters. */
function statusOf(line: RecognizedString): number {
  const text = typeof line === 'string' ? line : Buffer.from(line as Uint8Array).toString('latin1');
  return (text.charCodeAt(0) - 48) * 100 + (text.charCodeAt(1) - 48) * 10 + (text.charCodeAt(2) - 48);
}

function wrapOnce(proto: object): void {
  lastWrapped = proto;
  if (wrapped.has(proto)) return;
  wrapped.add(proto);
  const methods = proto as Record<string, Method>;
  const writeStatus = methods.writeStatus!;
  const write = methods.write!;
  const end = methods.end!;
  const endWithoutBody = methods.endWithoutBody!;
  const tryEnd = methods.tryEnd!;
  const close = methods.close!;
  const onAborted = methods.onAborted!;
  // Arguments are passed on as given, as many as were given: uWS reads an explicit `undefined`
  // differently from none. The hot ones (status, end, tryEnd) take no rest array per call.
  methods.writeStatus = function (this: Metered, status: RecognizedString) {
    if (this.plinthFinish !== undefined) this.plinthStatus = statusOf(status);
    return writeStatus.call(this, status);
  };
  methods.write = function (this: Metered, chunk: RecognizedString) {
    if (this.plinthFinish !== undefined) this.plinthBytes += sizeOf(chunk);
    return write.call(this, chunk);
  };
  methods.end = function (this: Metered, body?: RecognizedString, closeConnection?: boolean) {
    const result = arguments.length === 0 ? end.call(this) : arguments.length === 1 ? end.call(this, body) : end.call(this, body, closeConnection);
    if (this.plinthFinish !== undefined) finish(this, this.plinthBytes + sizeOf(body), false);
    return result;
  };
  methods.endWithoutBody = function (this: Metered, ...args: unknown[]) {
    const result = endWithoutBody.apply(this, args);
    finish(this, this.plinthBytes, false);
    return result;
  };
  methods.tryEnd = function (this: Metered, chunk: RecognizedString, totalSize: number) {
    const result = tryEnd.call(this, chunk, totalSize) as [boolean, boolean];
    if (result[1]) finish(this, totalSize, false);
    return result;
  };
  methods.close = function (this: Metered) {
    finish(this, this.plinthBytes, true);
    return close.apply(this, []);
  };
  methods.onAborted = function (this: Metered, ...args: unknown[]) {
    const handler = args[0] as () => void;
    return onAborted.call(this, () => {
      finish(this, this.plinthBytes, true);
      handler();
    });
  };
}
