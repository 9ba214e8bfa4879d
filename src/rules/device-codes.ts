/**
 * The words of the OAuth device authorization grant (RFC 8628) that people read and type: the
 * user code and the device's name. Pure rules, tested as tables.
 */

/**
 * RFC 8628 §6.1: twenty consonants, no vowels (no words can be spelt) and no digits (nothing to
 * mistake for O, I or L). Eight of them hold about 34.5 bits: guessed at the capped rate of wrong
 * tries, a code that lives minutes is out of reach.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
/** A device name is shown to the person and becomes the API token's name. */
export const DEVICE_NAME_MAX_CHARS = 80;

/** A user code from `pick(n)`, a uniform random integer below n (crypto `randomInt` in production). */
export function newUserCode(pick: (n: number) => number): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[pick(USER_CODE_ALPHABET.length)];
  return code;
}

/** `BCDFGHJK` → `BCDF-GHJK`, as people read it. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A user code as typed: case, dashes and spaces do not matter (RFC 8628 §6.1). Undefined when
 * what is left is not eight letters of the alphabet, so such input never reaches the store.
 */
export function normaliseUserCode(typed: unknown): string | undefined {
  if (typeof typed !== 'string' || typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s\-\u2010-\u2015]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const char of code) if (!USER_CODE_ALPHABET.includes(char)) return undefined;
  return code;
}

/**
 * A device's name as the client sent it: one line of printable characters, spaces collapsed,
 * at most 80 characters. `undefined` when none was sent (the client's name is used instead); a
 * string with the reason when it cannot be shown as it is.
 */
export function checkDeviceName(value: string | null | undefined): { name?: string; problem?: string } {
  if (value === null || value === undefined) return {};
  // Control, format (bidi overrides, zero-width) and separator characters could make the page say
  // something else than the name holds.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(value)) return { problem: 'device_name must be printable characters on one line.' };
  const name = value.replace(/\s+/g, ' ').trim();
  if (name === '') return {};
  if ([...name].length > DEVICE_NAME_MAX_CHARS) return { problem: `device_name may be at most ${DEVICE_NAME_MAX_CHARS} characters.` };
  return { name };
}

/**
 * Polls may come this much sooner than the interval without a `slow_down`: the client's wait is
 * measured from when it read the last answer, the server's from when it handled the last poll,
 * and in a cluster the two polls may be handled by different nodes. Never more than half the
 * interval, so that a short one (`PLINTH_DEVICE_POLL_INTERVAL_S=1`) is still enforced.
 */
export const POLL_LEEWAY_MS = 1000;

/** Whether a poll at `at` comes too soon after the one at `lastPolledAt` (RFC 8628 §3.5); the first never does. */
export function isPollTooSoon(lastPolledAt: number | undefined, at: number, intervalS: number): boolean {
  const leewayMs = Math.min(POLL_LEEWAY_MS, (intervalS * 1000) / 2);
  return lastPolledAt !== undefined && at - lastPolledAt < intervalS * 1000 - leewayMs;
}
