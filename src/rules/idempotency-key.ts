/**
 * An `Idempotency-Key` (Stripe's semantics, the IETF httpapi draft's header): chosen by the
 * client, so it is held to a form that is safe to echo in a message and small to hash.
 */

/** The longest key taken, as Stripe's. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** 1–255 printable ASCII characters (space to tilde); a UUID is the usual choice. */
export function isIdempotencyKey(value: string): boolean {
  return value.length >= 1 && value.length <= MAX_IDEMPOTENCY_KEY_CHARS && /^[\x20-\x7e]+$/.test(value);
}
