import { describe, expect, it } from 'vitest';
import { webhookUrlShown } from '../../src/rules/index.js';
import { eventView } from '../../src/sites/events.js';

/** A webhook's URL in the audit log: its origin, never the path or query that may be the receiver's credential. */
describe('webhook URLs in the audit log', () => {
  it.each([
    ['https://hooks.slack.com/services/T0/B0/secret', 'https://hooks.slack.com'],
    ['https://discord.com/api/webhooks/1/secret?wait=true', 'https://discord.com'],
    ['https://hooks.example.com:8443/plinth#frag', 'https://hooks.example.com:8443'],
    ['not a url', ''],
    ['mailto:someone@example.com', ''],
  ])('shows %s as %j', (url, shown) => {
    expect(webhookUrlShown(url)).toBe(shown);
  });

  it('cuts entries recorded before, when the whole URL was kept', () => {
    const view = eventView({
      id: 'ev_1',
      kind: 'webhook.created',
      at: 1_800_000_000_000,
      actor: { kind: 'account', email: 'owner@example.com', accountId: 'acc_1' },
      siteId: 'site_1',
      siteName: 'calm-heron',
      details: { webhook: 'wh_1', url: 'https://hooks.slack.com/services/T0/B0/secret', events: 'site.deleted' },
    });
    expect(view.details).toEqual({ webhook: 'wh_1', url: 'https://hooks.slack.com', events: 'site.deleted' });
    expect(JSON.stringify(view)).not.toContain('secret');
  });
});
