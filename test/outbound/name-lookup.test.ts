import { describe, expect, it } from 'vitest';
import { LATE, lookupBy, type Addresses } from '../../src/outbound/name-lookup.js';
import { slotsOf } from '../../src/rules/index.js';

/**
 * Outbound name lookups bounded across a process (PLINTH_OUTBOUND_LOOKUPS): each holds a thread of
 * libuv's pool until the resolver answers, whatever its caller's deadline, so a lookup keeps its
 * slot until then, and with none free the next is late at once. DNS is stood in for.
 */

const FOUND: Addresses = [{ address: '192.0.2.1', family: 4 }];
const far = () => performance.now() + 60_000;

/** A lookup that answers when told to. */
function pending(): { lookup: () => Promise<Addresses>; answer: () => void; fail: () => void } {
  let answer = (): void => undefined;
  let fail = (): void => undefined;
  const promise = new Promise<Addresses>((resolve, reject) => {
    answer = () => resolve(FOUND);
    fail = () => reject(new Error('getaddrinfo ENOTFOUND'));
  });
  return { lookup: () => promise, answer, fail };
}

describe('slots of a process', () => {
  it('count work across every holder of the shared buffer, and 0 bounds nothing', () => {
    const shared = new SharedArrayBuffer(4);
    const one = slotsOf(2, shared);
    const other = slotsOf(2, shared);
    expect([one.tryTake(), other.tryTake(), one.tryTake()]).toEqual([true, true, false]);
    other.give();
    expect(one.tryTake()).toBe(true);
    const unbounded = slotsOf(0, shared);
    expect(Array.from({ length: 100 }, () => unbounded.tryTake()).every(Boolean)).toBe(true);
  });
});

describe('a bounded lookup', () => {
  it('is late at its deadline and keeps its slot until the resolver answers; the next waits for it', async () => {
    const slots = slotsOf(1);
    const silent = pending();
    expect(await lookupBy(silent.lookup, slots, 'silent.test', performance.now() + 50)).toBe(LATE);
    // The first lookup still holds the pool's thread: the second is not started before its deadline.
    let started = false;
    const asked = async (): Promise<Addresses> => {
      started = true;
      return FOUND;
    };
    expect(await lookupBy(asked, slots, 'other.test', performance.now() + 50)).toBe(LATE);
    expect(started).toBe(false);
    // One that waits longer gets the slot once the resolver answers the first.
    const waiting = lookupBy(asked, slots, 'other.test', far());
    setTimeout(() => silent.answer(), 30);
    expect(await waiting).toEqual(FOUND);
    expect(started).toBe(true);
  });

  it('lets lookups sent at once past the bound wait their turn rather than fail', async () => {
    const slots = slotsOf(1);
    const slow = async (): Promise<Addresses> => new Promise((resolve) => setTimeout(() => resolve(FOUND), 20));
    const all = await Promise.all(Array.from({ length: 4 }, (_, i) => lookupBy(slow, slots, `n${i}.test`, far())));
    expect(all).toEqual([FOUND, FOUND, FOUND, FOUND]);
  });

  it('takes no slot for an IP address, which the resolver is not asked for', async () => {
    const slots = slotsOf(1);
    const silent = pending();
    void lookupBy(silent.lookup, slots, 'silent.test', far());
    expect(await lookupBy(async () => FOUND, slots, '192.0.2.1', far())).toEqual(FOUND);
    expect(await lookupBy(async () => FOUND, slots, '2001:db8::1', far())).toEqual(FOUND);
    silent.answer();
  });

  it.each([
    ['a failed lookup', (lookup: ReturnType<typeof pending>) => lookup.fail()],
    ['an answered one', (lookup: ReturnType<typeof pending>) => lookup.answer()],
  ])('gives its slot back after %s', async (_case, end) => {
    const slots = slotsOf(1);
    const first = pending();
    const asked = lookupBy(first.lookup, slots, 'one.test', far()).catch((err: Error) => err.message);
    end(first);
    await asked;
    expect(await lookupBy(async () => FOUND, slots, 'two.test', far())).toEqual(FOUND);
  });

  it('gives its slot back when the lookup throws before it starts', async () => {
    const slots = slotsOf(1);
    const throwing = (): Promise<Addresses> => {
      throw new Error('bad name');
    };
    await expect(lookupBy(throwing, slots, 'x', far())).rejects.toThrow('bad name');
    expect(await lookupBy(async () => FOUND, slots, 'two.test', far())).toEqual(FOUND);
  });
});
