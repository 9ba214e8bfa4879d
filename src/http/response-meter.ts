import type { HttpResponse, RecognizedString } from './uws.js';

/**
 * Every response's status, body bytes and time, for metrics and the access log, whoever writes
 * it: the prepared hot path, `writeResponse`, streamed files, MCP's event streams. Rather than
 * instrument each writer, the methods that end a response (`end`, `endWithoutBody`, a `tryEnd`
 * that finishes, `close`, and an abort) are wrapped once on the prototype uWS gives every
 * HttpResponse, much as `on-finished` hooks Node's `res.end`. A response is measured only when
 * `begin` was called for it, so nothing changes for the rest; when no meter is made, nothing is
 * wrapped at all.
 *
 * Nothing is written onto uWS's response objects (a native object given new properties on every
 * request changes shape every time), and none is held past its handler by this module: keeping the
 * last response in a module variable cost 3 % of a 2 KB page's CPU (bench/RESULTS.md, "Metrics").
 * The response whose handler is running is measured in this thread's one slot, open from `begin`
 * to `handled` (uWS runs a thread's handlers one at a time, and most answers end inside their
 * handler); one still owed when its handler returns moves to a weak table of owed responses.
 *
 * The prepared hot path of the site host (serve/site-server.ts) knows its status and size, and ends
 * its answers through `end` and `endWithoutBody` below: uWS's own methods, then the count, without
 * the wrappers (they and the status parsing were most of what metrics cost a 2 KB page; see
 * bench/RESULTS.md, "Metrics"). `PLAIN_ENDS` does the same with no meter.
 *
 * Reading the clock is the largest part of the cost (two reads were 3 % of a 2 KB page's CPU), so
 * unless `timeEveryAnswer` is set, an answer given within its handler (from memory, in
 * microseconds) is not timed: it counts as taking no time. One still owed when its handler returns
 * (it waits on I/O: a deploy, a blob fetch, a streamed file) is timed from that return, which
 * `handled` marks. The access log, which prints each answer's time, sets `timeEveryAnswer`.
 */

/** How a measured response ended. `aborted`: the client went away, or the server cut it off. */
export type FinishedResponse<Detail> = (tag: number, status: number, bytes: number, ms: number, aborted: boolean, detail: Detail) => void;

/**
 * Counts an answer that `end` or `endWithoutBody` gave within its handler, untimed: for metrics
 * that count such answers with a couple of array writes and fold them in when read (thread-metrics.ts).
 */
export type AnsweredResponse = (tag: number, status: number, bytes: number) => void;

export interface ResponseMeter<Detail> {
  /**
   * Measures `res` from now until it ends; `tag` (a host kind, say) and `detail` come back with
   * it. Call first thing in the handler, before anything is written.
   */
  begin(res: HttpResponse, tag: number, detail: Detail): void;
  /** Changes the tag of a response being measured (once its handler knows better). */
  retag(res: HttpResponse, tag: number): void;
  /** The handler of `res` has returned: from here an answer still owed is timed. */
  handled(res: HttpResponse): void;
  /**
   * Ends `res` with `body` through uWS's own `end` and counts it as `status` and `bytes`: for a
   * writer inside the handler that knows all three, which then skips the wrappers. `status` is the
   * one it wrote; `bytes` is `body`'s size (read here, a Buffer's `byteLength` took optimized code a
   * generic property load per request).
   */
  end(res: HttpResponse, status: number, body: Uint8Array | ArrayBuffer, bytes: number): void;
  /** The same for an answer without a body (a 304). */
  endWithoutBody(res: HttpResponse, status: number): void;
}

/** How a writer that knows its status and size ends a response: a meter's, or `PLAIN_ENDS`. */
export type ResponseEnds = Pick<ResponseMeter<unknown>, 'end' | 'endWithoutBody'>;

/** Ends responses with nothing measured (no meter). */
export const PLAIN_ENDS: ResponseEnds = {
  end(res, _status, body) {
    res.end(body);
  },
  endWithoutBody(res) {
    res.endWithoutBody();
  },
};

export interface ResponseMeterOptions {
  /** Time answers given within their handler too (two clock reads per request). */
  timeEveryAnswer: boolean;
  /**
   * Counts the answers of `end` and `endWithoutBody` in place of `onFinished`, when they are not
   * timed and no one needs their detail (no access log): the prepared path's answers then cost
   * the count itself, not a call through the finish callback.
   */
  answered?: AnsweredResponse;
}

/** What is kept of a response being measured. */
interface Measure {
  finish: FinishedResponse<unknown> | undefined;
  /** When timing began; `UNTIMED` for an answer not timed (yet). */
  start: number;
  tag: number;
  detail: unknown;
  status: number;
  bytes: number;
}

// The slot: the response whose handler is running, while `slotOpen`; closed by its answer or by
// `handled`.
let slotOpen = false;
const slot: Measure = { finish: undefined, start: 0, tag: 0, detail: undefined, status: 200, bytes: 0 };
// Responses that outlived their handler: uploads, deploys, streamed files. Weak, so a response uWS
// dropped without an end or an abort is not kept.
const owed = new WeakMap<HttpResponse, Measure>();
let owedCount = 0;
const UNTIMED = -1;

/**
 * The measure of `res`, if it is being measured: an owed one by its entry, else the slot's while
 * a handler runs (what a handler answers within itself is its own response).
 */
function measureOf(res: HttpResponse): Measure | undefined {
  if (owedCount > 0) {
    const measure = owed.get(res);
    if (measure !== undefined) return measure;
  }
  return slotOpen ? slot : undefined;
}

// Each native method has parameters of its own; the wrappers below state them.
type Method = (this: HttpResponse, ...args: any[]) => unknown;
// uWS's own `end` and `endWithoutBody`, kept on the wrapped prototype under these keys (one
// property each on the one prototype; the response objects themselves are left alone).
const NATIVE_END = Symbol('uWS end');
const NATIVE_END_WITHOUT_BODY = Symbol('uWS endWithoutBody');
interface NativeEnds {
  [NATIVE_END]?: (body: RecognizedString) => unknown;
  [NATIVE_END_WITHOUT_BODY]?: () => unknown;
}
const wrapped = new WeakSet<object>();
// The prototype last seen: every response of a thread has the same one, so the set is asked once.
let lastWrapped: object | undefined;

export function createResponseMeter<Detail>(onFinished: FinishedResponse<Detail>, options: ResponseMeterOptions): ResponseMeter<Detail> {
  const timeEveryAnswer = options.timeEveryAnswer;
  // A timed answer needs the finish callback (its time, and whatever prints it).
  const answered = timeEveryAnswer ? undefined : options.answered;
  return {
    begin(res, tag, detail) {
      // Every response of a thread is of one class (one App): its prototype is wrapped once.
      if (lastWrapped === undefined) wrapOnce(Object.getPrototypeOf(res) as object);
      slotOpen = true;
      slot.finish = onFinished as FinishedResponse<unknown>;
      slot.start = timeEveryAnswer ? performance.now() : UNTIMED;
      slot.tag = tag;
      slot.detail = detail;
      slot.status = 200;
      slot.bytes = 0;
    },
    retag(res, tag) {
      const measure = measureOf(res);
      if (measure !== undefined) measure.tag = tag;
    },
    handled(res) {
      if (!slotOpen) return;
      // Still owed: it waits on I/O, timed from here unless it was from the start.
      slotOpen = false;
      owed.set(res, { ...slot, start: slot.start === UNTIMED ? performance.now() : slot.start });
      owedCount++;
    },
    end(res, status, body, bytes) {
      // Only the running handler's own response is in the slot; anything else takes the wrapper.
      const end = (res as NativeEnds)[NATIVE_END];
      if (!slotOpen || end === undefined) return void res.end(body);
      end.call(res, body);
      if (answered === undefined) return finishSlot(status, bytes);
      slotOpen = false;
      answered(slot.tag, status, bytes);
    },
    endWithoutBody(res, status) {
      const endWithoutBody = (res as NativeEnds)[NATIVE_END_WITHOUT_BODY];
      if (!slotOpen || endWithoutBody === undefined) return void res.endWithoutBody();
      endWithoutBody.call(res);
      if (answered === undefined) return finishSlot(status, 0);
      slotOpen = false;
      answered(slot.tag, status, 0);
    },
  };
}

/** The response in the slot ended within its handler, as `status` with `bytes` of body. */
function finishSlot(status: number, bytes: number): void {
  slotOpen = false;
  const onFinished = slot.finish;
  if (onFinished === undefined) return;
  slot.finish = undefined;
  const ms = slot.start === UNTIMED ? 0 : performance.now() - slot.start;
  onFinished(slot.tag, status, bytes, ms, false, slot.detail);
}

function finish(res: HttpResponse, bytes: number | undefined, aborted: boolean): void {
  let measure = owedCount > 0 ? owed.get(res) : undefined;
  if (measure !== undefined) {
    owed.delete(res);
    owedCount--;
  } else if (slotOpen) {
    measure = slot;
    slotOpen = false;
  } else {
    return;
  }
  const onFinished = measure.finish;
  if (onFinished === undefined) return;
  // Once only: a close or an abort may follow an end.
  measure.finish = undefined;
  const ms = measure.start === UNTIMED ? 0 : performance.now() - measure.start;
  onFinished(measure.tag, measure.status, bytes ?? measure.bytes, ms, aborted, measure.detail);
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
  const natives = proto as NativeEnds;
  natives[NATIVE_END] = end;
  natives[NATIVE_END_WITHOUT_BODY] = endWithoutBody;
  // Arguments are passed on as given, as many as were given: uWS reads an explicit `undefined`
  // differently from none. The hot ones (status, end, tryEnd) take no rest array per call.
  methods.writeStatus = function (this: HttpResponse, status: RecognizedString) {
    const measure = measureOf(this);
    if (measure !== undefined) measure.status = statusOf(status);
    return writeStatus.call(this, status);
  };
  methods.write = function (this: HttpResponse, chunk: RecognizedString) {
    const measure = measureOf(this);
    if (measure !== undefined) measure.bytes += sizeOf(chunk);
    return write.call(this, chunk);
  };
  methods.end = function (this: HttpResponse, body?: RecognizedString, closeConnection?: boolean) {
    const result = arguments.length === 0 ? end.call(this) : arguments.length === 1 ? end.call(this, body) : end.call(this, body, closeConnection);
    const measure = measureOf(this);
    if (measure !== undefined) finish(this, measure.bytes + sizeOf(body), false);
    return result;
  };
  methods.endWithoutBody = function (this: HttpResponse, ...args: unknown[]) {
    const result = endWithoutBody.apply(this, args);
    finish(this, undefined, false);
    return result;
  };
  methods.tryEnd = function (this: HttpResponse, chunk: RecognizedString, totalSize: number) {
    const result = tryEnd.call(this, chunk, totalSize) as [boolean, boolean];
    if (result[1]) finish(this, totalSize, false);
    return result;
  };
  methods.close = function (this: HttpResponse) {
    finish(this, undefined, true);
    return close.apply(this, []);
  };
  methods.onAborted = function (this: HttpResponse, ...args: unknown[]) {
    const handler = args[0] as () => void;
    return onAborted.call(this, () => {
      finish(this, undefined, true);
      handler();
    });
  };
}
