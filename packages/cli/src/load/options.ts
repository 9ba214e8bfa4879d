/** Small parsers for the command line of `plinth load`: durations, counts, shares. */
export class UsageProblem extends Error {}

/** `60s`, `2m`, `500ms`, `1h` or a bare number of seconds → milliseconds. */
export function parseDuration(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new UsageProblem(`${flag} takes a duration such as 60s, 2m or 500ms, not "${value}"`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * factor;
  if (ms <= 0) throw new UsageProblem(`${flag} must be more than 0`);
  return ms;
}

export function parseCount(value: string, flag: string, { min = 1, integer = true }: { min?: number; integer?: boolean } = {}): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
    throw new UsageProblem(`${flag} takes ${integer ? 'a whole number' : 'a number'} of at least ${min}, not "${value}"`);
  return n;
}

export function parseShare(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new UsageProblem(`${flag} takes a share from 0 to 1, not "${value}"`);
  return n;
}
