/**
 * The request headers an answer of a published site reads once its handler has returned (a
 * password checked, a body fetched, a variant made): uWS's request dies with the handler, so
 * whoever waits copies these first (http `copyServedRequest`, which keeps X-Forwarded-For too).
 * The first four decide the answer; `referer` and `user-agent` are what analytics count a page
 * view by (visits.ts): a copy without them would count the visitor as a crawler, their referrer
 * lost. One list, so that every copy (the gate's included) keeps what the answer reads.
 */
export const ANSWER_HEADERS = ['accept-encoding', 'if-none-match', 'range', 'if-range', 'referer', 'user-agent'] as const;
