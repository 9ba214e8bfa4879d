import { describe, expect, it } from 'vitest';
import { useTestStore } from './helpers.js';

const HOUR_MS = 3600_000;

const t = useTestStore('replays');

describe('replay records', () => {
  it('lets exactly one of several racing claims through, and answers the others the record', async () => {
    const pending = { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS };
    const results = await Promise.all(Array.from({ length: 5 }, () => t.store.claimReplay('race', pending)));
    expect(results.filter((result) => result === undefined)).toHaveLength(1);
    for (const result of results) if (result !== undefined) expect(result).toEqual(pending);
  });

  it('keeps an answer in place of the claim, and a claim then meets the answer', async () => {
    await t.store.claimReplay('kept', { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS });
    const answer = { fingerprint: 'f'.repeat(64), status: 201, sealed: 'iv.body.tag', createdAt: t.clock.now, expiresAt: t.clock.now + 24 * HOUR_MS };
    await t.store.putReplay('kept', answer);
    expect(t.store.getReplay('kept')).toEqual(answer);
    expect(await t.store.claimReplay('kept', { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS })).toEqual(answer);
  });

  it('frees a dropped claim for the next request', async () => {
    expect(await t.store.claimReplay('dropped', { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS })).toBeUndefined();
    await t.store.dropReplay('dropped');
    expect(t.store.getReplay('dropped')).toBeUndefined();
    expect(await t.store.claimReplay('dropped', { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS })).toBeUndefined();
  });

  it('treats an expired record as absent, and the sweep removes it', async () => {
    await t.store.putReplay('expiring', { fingerprint: 'a'.repeat(64), status: 201, sealed: 'x', createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS });
    await t.store.putReplay('lasting', {
      fingerprint: 'b'.repeat(64),
      status: 201,
      sealed: 'y',
      createdAt: t.clock.now,
      expiresAt: t.clock.now + 30 * HOUR_MS,
    });
    t.clock.now += 2 * HOUR_MS;
    expect(t.store.getReplay('expiring')).toBeUndefined();
    expect(await t.store.claimReplay('expiring', { createdAt: t.clock.now, expiresAt: t.clock.now + HOUR_MS })).toBeUndefined();
    t.clock.now += 2 * HOUR_MS;
    expect(await t.store.pruneExpired()).toBeGreaterThanOrEqual(1);
    expect(t.store.getReplay('expiring')).toBeUndefined();
    expect(t.store.getReplay('lasting')?.sealed).toBe('y');
  });
});
