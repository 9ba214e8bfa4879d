import { describe, expect, it } from 'vitest';
import { loadConfig, redactConfig } from '../../src/config.js';

/** The API's configuration. */

describe('API configuration', () => {
  it('has generous defaults', () => {
    const config = loadConfig({});
    expect(config.api).toEqual({
      ratePerCredentialPerMinute: 600,
      ratePerNetworkPerMinute: 1200,
      sitesLimit: { free: 3, prompter: 20, builder: 100, team: 300, company: 1000 },
    });
    expect(config.mail).toEqual({ smtpUrl: undefined, from: 'Plinth <no-reply@localhost>' });
  });

  it('reads every API and mail variable', () => {
    const config = loadConfig({
      PLINTH_API_RATE_PER_CREDENTIAL: '5',
      PLINTH_API_RATE_PER_NETWORK: '0',
      PLINTH_SITES_LIMIT_FREE: '1',
      PLINTH_SITES_LIMIT_PROMPTER: '2',
      PLINTH_SITES_LIMIT_BUILDER: '3',
      PLINTH_SITES_LIMIT_TEAM: '4',
      PLINTH_SITES_LIMIT_COMPANY: '5',
      PLINTH_SMTP_URL: 'smtps://user:secret@smtp.example.com:465',
      PLINTH_MAIL_FROM: 'Sites <sites@example.com>',
    });
    expect(config.api).toEqual({
      ratePerCredentialPerMinute: 5,
      ratePerNetworkPerMinute: 0,
      sitesLimit: { free: 1, prompter: 2, builder: 3, team: 4, company: 5 },
    });
    expect(config.mail).toEqual({ smtpUrl: 'smtps://user:secret@smtp.example.com:465', from: 'Sites <sites@example.com>' });
  });

  it.each([
    [{ PLINTH_API_RATE_PER_CREDENTIAL: '-1' }, 'PLINTH_API_RATE_PER_CREDENTIAL'],
    [{ PLINTH_SITES_LIMIT_TEAM: 'many' }, 'PLINTH_SITES_LIMIT_TEAM'],
    [{ PLINTH_SMTP_URL: 'http://smtp.example.com' }, 'PLINTH_SMTP_URL'],
    [{ PLINTH_SMTP_URL: 'not a url' }, 'PLINTH_SMTP_URL'],
    [{ PLINTH_MAIL_FROM: 'a@b\nBcc: c@d' }, 'PLINTH_MAIL_FROM'],
  ])('rejects %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('keeps the SMTP password out of the logged config', () => {
    const logged = JSON.stringify(redactConfig(loadConfig({ PLINTH_SMTP_URL: 'smtp://user:secret@smtp.example.com:587' })));
    expect(logged).not.toContain('secret');
    expect(logged).toContain('smtp://user:***@smtp.example.com:587');
  });
});
