import { describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/store/index.js';
import { useTestStore } from './helpers.js';

/** The webhook delivery queue of one machine (docs/webhooks.md): what is due, a few per site, held while tried. */

let counter = 0;

const delivery = (siteId: string, nextAt: number): WebhookDelivery => ({
  id: `msg_${siteId}_${++counter}`,
  webhookId: `wh_${siteId}`,
  siteId,
  event: 'deploy.published',
  payload: '{}',
  createdAt: nextAt,
  state: 'pending',
  attempts: 0,
  nextAt,
});

describe('the delivery queue', () => {
  const t = useTestStore('plinth-deliveries-');

  it('hands out what is due, oldest first, at most a few per site counting those still held', async () => {
    const at = t.clock.now;
    const queue = t.store.deliveries;
    await queue.enqueue([
      delivery('a', at - 3),
      delivery('a', at - 2),
      delivery('a', at - 1),
      delivery('a', at),
      delivery('b', at - 5),
      delivery('c', at + 60_000),
    ]);
    const first = await queue.claim({ at, limit: 10, perSite: 2, leaseMs: 15_000 });
    expect(first.map((d) => d.siteId)).toEqual(['b', 'a', 'a']);
    expect(first.every((d) => d.attempts === 1 && d.leaseUntil === at + 15_000)).toBe(true);
    // Two of a's are held: none more of a's until one is finished.
    expect(await queue.claim({ at, limit: 10, perSite: 2, leaseMs: 15_000 })).toEqual([]);
    await queue.finish(first[1]!.id, { delivered: true, status: 204, at });
    const next = await queue.claim({ at, limit: 10, perSite: 2, leaseMs: 15_000 });
    expect(next).toHaveLength(1);
    expect(next[0]!.siteId).toBe('a');
  });
});

describe('a delivery whose node died', () => {
  const t = useTestStore('plinth-deliveries-');

  it('hands a held delivery out again once its hold ran out (its node died), with the same id', async () => {
    const at = t.clock.now + 3600_000;
    const queue = t.store.deliveries;
    const item = delivery('d', at);
    await queue.enqueue([item]);
    const [taken] = await queue.claim({ at, limit: 1, perSite: 0, leaseMs: 15_000 });
    expect(taken!.id).toBe(item.id);
    expect(await queue.claim({ at: at + 14_999, limit: 1, perSite: 0, leaseMs: 15_000 })).toEqual([]);
    const [again] = await queue.claim({ at: at + 15_000, limit: 1, perSite: 0, leaseMs: 15_000 });
    expect(again).toMatchObject({ id: item.id, attempts: 2 });
  });
});

describe('failed deliveries', () => {
  const t = useTestStore('plinth-deliveries-');

  it('waits for the next attempt of a failure and keeps a given-up one out of the queue', async () => {
    const at = t.clock.now + 7200_000;
    const queue = t.store.deliveries;
    const retried = delivery('e', at);
    const givenUp = delivery('e', at);
    await queue.enqueue([retried, givenUp]);
    await queue.claim({ at, limit: 2, perSite: 0, leaseMs: 15_000 });
    await queue.finish(retried.id, { delivered: false, status: 503, at, retryAt: at + 5_000 });
    await queue.finish(givenUp.id, { delivered: false, error: 'timeout', at });
    expect(await queue.claim({ at: at + 4_999, limit: 2, perSite: 0, leaseMs: 15_000 })).toEqual([]);
    expect((await queue.claim({ at: at + 5_000, limit: 2, perSite: 0, leaseMs: 15_000 })).map((d) => d.id)).toEqual([retried.id]);
    const listed = await queue.list('wh_e', 10);
    expect(listed.find((d) => d.id === givenUp.id)).toMatchObject({ state: 'failed', lastError: 'timeout', attempts: 1 });
  });
});
