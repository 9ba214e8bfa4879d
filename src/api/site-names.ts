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
