import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from '../../src/rules/index.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', 'abc', 0],
    ['', 'abc', 3],
    ['DATABSE', 'DATABASE', 1],
    ['THRAEDS', 'THREADS', 1],
    ['kitten', 'sitting', 3],
    ['ab', 'ba', 1],
    ['ca', 'abc', 3],
  ])('%s → %s: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closestName', () => {
  it.each([
    ['PLINTH_DATABSE_URL', ['PLINTH_PORT', 'PLINTH_DATABASE_URL', 'PLINTH_API_URL'], 'PLINTH_DATABASE_URL'],
    ['PLINTH_PORT', ['PLINTH_PORT', 'PLINTH_PORTS'], 'PLINTH_PORT'],
    // A tie goes to the earlier candidate.
    ['ab', ['aa', 'bb'], 'aa'],
    ['anything', [], undefined],
  ])('%s among %j → %s', (name, candidates, closest) => {
    expect(closestName(name, candidates)).toBe(closest);
  });
});
