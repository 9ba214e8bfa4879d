import { randomInt } from 'node:crypto';

/**
 * Site names: the random `word-word-NNNN` form given to anonymous sites, and the rules for names
 * people choose on rename (SPEC 4.3). Words are short, friendly and unambiguous in print.
 */

const ADJECTIVES = [
  'amber', 'ample', 'azure', 'bold', 'brave', 'breezy', 'bright', 'brisk', 'calm', 'candid',
  'cheery', 'clever', 'cosmic', 'cozy', 'crisp', 'curious', 'daring', 'dapper', 'dreamy', 'eager',
  'early', 'easy', 'elegant', 'epic', 'fancy', 'fearless', 'festive', 'fluffy', 'fresh', 'friendly',
  'gentle', 'giddy', 'glad', 'golden', 'graceful', 'grand', 'happy', 'hardy', 'hearty', 'honest',
  'humble', 'jolly', 'joyful', 'keen', 'kind', 'lively', 'lucky', 'lunar', 'mellow', 'merry',
  'mighty', 'misty', 'modest', 'neat', 'nimble', 'noble', 'polite', 'proud', 'quick', 'quiet',
  'radiant', 'rapid', 'rosy', 'royal', 'rustic', 'serene', 'shiny', 'silver', 'simple', 'sleek',
  'smooth', 'snowy', 'solar', 'sparkly', 'spry', 'steady', 'sturdy', 'sunny', 'swift', 'tidy',
  'tranquil', 'trusty', 'upbeat', 'vivid', 'warm', 'whimsical', 'wise', 'witty', 'zesty', 'zippy',
] as const;

const NOUNS = [
  'acorn', 'anchor', 'apple', 'aurora', 'badger', 'basil', 'beacon', 'birch', 'bison', 'breeze',
  'brook', 'canyon', 'cedar', 'cloud', 'clover', 'comet', 'coral', 'cove', 'crane', 'creek',
  'dawn', 'delta', 'dune', 'eagle', 'ember', 'falcon', 'fern', 'field', 'finch', 'fjord',
  'forest', 'fox', 'galaxy', 'garden', 'glacier', 'grove', 'harbor', 'hazel', 'heron', 'hill',
  'island', 'lagoon', 'lake', 'lantern', 'lark', 'leaf', 'lemon', 'lotus', 'maple', 'meadow',
  'mesa', 'moon', 'moss', 'otter', 'owl', 'panda', 'pebble', 'pine', 'planet', 'pond',
  'prairie', 'quartz', 'rabbit', 'raven', 'reef', 'river', 'robin', 'sage', 'shore', 'sky',
  'sparrow', 'spruce', 'star', 'stone', 'summit', 'sun', 'thicket', 'tide', 'tulip', 'valley',
  'violet', 'wave', 'willow', 'wren', 'zephyr', 'orchid', 'pepper', 'puffin', 'walrus', 'koala',
] as const;

/** A fresh random name; the caller retries if the store says it was ever used. */
export function randomSiteName(): string {
  const adjective = ADJECTIVES[randomInt(ADJECTIVES.length)]!;
  const noun = NOUNS[randomInt(NOUNS.length)]!;
  return `${adjective}-${noun}-${randomInt(1000, 10000)}`;
}

/** `word-word-NNNN`: the form reserved for names we hand out. */
export function isRandomNameForm(name: string): boolean {
  return /^[a-z]+-[a-z]+-\d{4}$/.test(name);
}

/** Any syntactically valid site name (a DNS label we serve). */
export function isSiteNameSyntax(name: string): boolean {
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(name);
}

/**
 * Names kept for the service's own hosts and for addresses people could mistake for ours.
 * Renames may not take them; random names never match them (they have the `word-word-NNNN` form).
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'api', 'app', 'mcp', 'docs', 'www', 'admin', 'mail', 'status',
  'assets', 'static', 'cdn', 'support', 'help', 'billing', 'login', 'logout', 'signin', 'signup',
  'auth', 'oauth', 'account', 'accounts', 'dashboard', 'console', 'settings', 'security',
  'abuse', 'report', 'smtp', 'imap', 'pop', 'ftp', 'ns1', 'ns2', 'root', 'system',
  'plinth', 'webmail', 'autodiscover', 'autoconfig',
  'localhost', 'test', 'example', 'invalid',
]);

/** Why `name` cannot be chosen on rename (SPEC 4.3), or `undefined` when it can (if unused). */
export function renameProblem(name: string): string | undefined {
  if (name.length < 4 || name.length > 63) return 'A site name has 4 to 63 characters.';
  if (!/^[a-z0-9-]+$/.test(name)) return 'A site name uses only lower-case letters a-z, digits 0-9 and hyphens.';
  if (name.startsWith('-') || name.endsWith('-')) return 'A site name cannot start or end with a hyphen.';
  // `ab--…` is the DNS form of internationalised names (xn--…); such labels would not mean what they look like.
  if (name.slice(2, 4) === '--') return 'A site name cannot have hyphens in its third and fourth characters.';
  if (isRandomNameForm(name)) return 'Names of the form word-word-NNNN are kept for generated names.';
  if (RESERVED_NAMES.has(name)) return `${name} is reserved.`;
  return undefined;
}
