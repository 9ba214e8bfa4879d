import { emptyHistogram, merge, record, type Histogram } from './histogram.js';
import { REQUEST_KINDS, type RequestKind } from './mix.js';

/**
 * What a thread counted over a stretch of time: requests, latencies (overall and by kind),
 * statuses, errors by kind and body bytes. Plain data that crosses threads and adds up.
 */
export type ErrorKind = 'status' | 'wrong_body' | 'wrong_type' | 'connection' | 'timeout';

export const ERROR_KINDS: readonly ErrorKind[] = ['status', 'wrong_body', 'wrong_type', 'connection', 'timeout'];

export interface Tally {
  requests: number;
  bytes: number;
  latency: Histogram;
  byKind: Record<RequestKind, { requests: number; latency: Histogram }>;
  statuses: Record<string, number>;
  errors: Record<ErrorKind, number>;
  /** The statuses of answers that were errors because of their status. */
  errorStatuses: Record<string, number>;
  /** Answers whose bytes were checked against the corpus. */
  checked: number;
  /** Requests sent with If-None-Match, and those answered 304. */
  revalidations: number;
  notModified: number;
}

export function emptyTally(): Tally {
  return {
    requests: 0,
    bytes: 0,
    latency: emptyHistogram(),
    byKind: Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, { requests: 0, latency: emptyHistogram() }])) as Tally['byKind'],
    statuses: {},
    errors: { status: 0, wrong_body: 0, wrong_type: 0, connection: 0, timeout: 0 },
    errorStatuses: {},
    checked: 0,
    revalidations: 0,
    notModified: 0,
  };
}

export interface Outcome {
  kind: RequestKind;
  latencyUs: number;
  /** Undefined when no answer came (connection error, timeout). */
  status?: number;
  bytes: number;
  error?: ErrorKind;
  checked: boolean;
  revalidation: boolean;
}

export function count(tally: Tally, outcome: Outcome): void {
  tally.requests++;
  tally.bytes += outcome.bytes;
  record(tally.latency, outcome.latencyUs);
  const kind = tally.byKind[outcome.kind];
  kind.requests++;
  record(kind.latency, outcome.latencyUs);
  const status = outcome.status === undefined ? 'none' : String(outcome.status);
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  if (outcome.error) tally.errors[outcome.error]++;
  if (outcome.error === 'status') tally.errorStatuses[status] = (tally.errorStatuses[status] ?? 0) + 1;
  if (outcome.checked) tally.checked++;
  if (outcome.revalidation) tally.revalidations++;
  if (outcome.status === 304) tally.notModified++;
}

export function mergeTally(into: Tally, from: Tally): Tally {
  into.requests += from.requests;
  into.bytes += from.bytes;
  merge(into.latency, from.latency);
  for (const kind of REQUEST_KINDS) {
    into.byKind[kind].requests += from.byKind[kind].requests;
    merge(into.byKind[kind].latency, from.byKind[kind].latency);
  }
  for (const [status, n] of Object.entries(from.statuses)) into.statuses[status] = (into.statuses[status] ?? 0) + n;
  for (const kind of ERROR_KINDS) into.errors[kind] += from.errors[kind];
  for (const [status, n] of Object.entries(from.errorStatuses)) into.errorStatuses[status] = (into.errorStatuses[status] ?? 0) + n;
  into.checked += from.checked;
  into.revalidations += from.revalidations;
  into.notModified += from.notModified;
  return into;
}

export const errorCount = (tally: Tally): number => ERROR_KINDS.reduce((sum, kind) => sum + tally.errors[kind], 0);
