import { describe, expect, it } from 'vitest';
import { webhookHears } from '../../src/rules/index.js';

describe('which events a webhook is sent', () => {
  const events = ['site.claimed', 'deploy.published'];
  it.each([
    ['an active webhook, an event it asked for', {}, 'deploy.published', true],
    ['an active webhook, an event it did not ask for', {}, 'site.deleted', false],
    ['disabled by failures, even the claim', { disabledAt: 1, disabledFor: 'failures' }, 'site.claimed', false],
    ['disabled before the reason was kept', { disabledAt: 1 }, 'site.claimed', false],
    ['ended by the claim: the claim itself', { disabledAt: 1, disabledFor: 'claim' }, 'site.claimed', true],
    ['ended by the claim: anything after it', { disabledAt: 1, disabledFor: 'claim' }, 'deploy.published', false],
  ] as const)('%s', (_case, state, kind, heard) => {
    expect(webhookHears({ events, ...state }, kind)).toBe(heard);
  });
  it('does not send the claim to a webhook ended by it that never asked for it', () => {
    expect(webhookHears({ events: ['deploy.published'], disabledAt: 1, disabledFor: 'claim' }, 'site.claimed')).toBe(false);
  });
});
