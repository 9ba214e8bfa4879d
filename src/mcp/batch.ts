/**
 * When a JSON-RPC batch (a JSON array body) may be served. MCP had batches in one revision only:
 * 2025-03-26 added them and 2025-06-18 removed them; 2026-07-28 carries each message's context in
 * the message and has none either. 2024-11-05 never had them: 2025-03-26 keeps `initialize` out of
 * batches precisely so that clients of "prior protocol versions that do not explicitly support
 * JSON-RPC batches" are never sent one. Serving batches where the revision has none would only
 * let one small request draw many answers.
 */
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

/** The one protocol revision with JSON-RPC batches. */
export const BATCH_REVISION = '2025-03-26';

export function allowsBatches(revision: string): boolean {
  return revision === BATCH_REVISION;
}

export type BatchVerdict = { ok: true; calls: number } | { ok: false; message: string };

/**
 * Whether a batch may be served. `headerRevision` is the `MCP-Protocol-Version` header (a server
 * that gets none assumes 2025-03-26, as the spec says); a member may name its own revision too,
 * an `initialize` in its `params.protocolVersion`, a 2026-07-28 message in its `_meta`, and every
 * revision named must allow batches. `maxMessages` 0 leaves only the SDK's own cap.
 */
export function judgeBatch(members: readonly unknown[], headerRevision: string | undefined, maxMessages: number): BatchVerdict {
  const revisions = [headerRevision ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION, ...members.map(revisionOf)];
  const forbidding = revisions.find((revision) => revision !== undefined && !allowsBatches(revision));
  if (forbidding !== undefined)
    return { ok: false, message: `JSON-RPC batching is not supported in ${nameOf(forbidding)} (only in ${BATCH_REVISION}): send one message per request.` };
  if (members.length === 0) return { ok: false, message: 'An empty JSON-RPC batch is not a request.' };
  if (!members.every(isPlainObject)) return { ok: false, message: 'Every member of a JSON-RPC batch must be a JSON-RPC message object.' };
  // The spec's own rule for 2025-03-26: initialization happens before anything can be batched.
  if (members.some((member) => (member as { method?: unknown }).method === 'initialize'))
    return { ok: false, message: 'initialize must not be part of a JSON-RPC batch.' };
  if (maxMessages > 0 && members.length > maxMessages)
    return { ok: false, message: `A JSON-RPC batch may carry at most ${maxMessages} messages: send the rest in another request.` };
  // The SDK pairs answers with requests by id: a repeated id runs every call but answers one.
  const requests = (members as ReadonlyArray<Record<string, unknown>>).filter((member) => 'method' in member && 'id' in member);
  const ids = requests.map((request) => JSON.stringify(request.id));
  if (new Set(ids).size !== ids.length) return { ok: false, message: 'Every request in a JSON-RPC batch needs an id of its own.' };
  return { ok: true, calls: members.length };
}

/** The revision one member names for itself, if any. */
function revisionOf(member: unknown): string | undefined {
  if (!isPlainObject(member) || !isPlainObject(member.params)) return undefined;
  const { params } = member;
  if (member.method === 'initialize' && typeof params.protocolVersion === 'string') return params.protocolVersion;
  const meta = params._meta;
  if (!isPlainObject(meta) || !(PROTOCOL_VERSION_META_KEY in meta)) return undefined;
  // A claim that is not a string still says "not 2025-03-26" (the SDK rejects it as malformed).
  const claim = meta[PROTOCOL_VERSION_META_KEY];
  return typeof claim === 'string' ? claim : '';
}

/** Revisions are dates; anything else is not echoed back. */
function nameOf(revision: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(revision) ? `protocol revision ${revision}` : 'the protocol revision named';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
