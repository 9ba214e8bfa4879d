import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMailer } from '../../src/outbound/mailer.js';
import { inviteMail } from '../../src/outbound/mail-templates.js';
import { tempDir } from '../helpers/sites.js';

/** E-mail: outbox files without a relay, and a real SMTP server (STARTTLS, AUTH) with one. */

const log = createLogger({ level: 'silent' });
const now = () => Date.UTC(2026, 0, 2, 3, 4, 5);
const mail = inviteMail({
  to: 'friend@example.com',
  inviter: 'owner@example.com',
  siteName: 'blue-site',
  siteUrl: 'http://blue-site.sites.localhost',
  role: 'editor',
  acceptUrl: 'http://app.localhost/invites/inv_x?a=1&b=<2>',
  expiresAt: '2026-01-09T03:04:05.000Z',
});

interface Received {
  user?: string;
  secure: boolean;
  parsed: ParsedMail;
}

let server: SMTPServer | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A real SMTP server on loopback; its built-in self-signed certificate serves STARTTLS. */
async function startSmtp(options: { refuseRecipient?: boolean } = {}): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === 'relay-user' && auth.password === 'p@ss word') return callback(null, { user: auth.username });
      return callback(new Error('Invalid credentials'));
    },
    onRcptTo(_address, _session, callback) {
      if (options.refuseRecipient) return callback(new Error('Mailbox unavailable'));
      return callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({ user: session.user as string | undefined, secure: session.secure, parsed });
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, received };
}

const relayUrl = (port: number) => `smtp://relay-user:${encodeURIComponent('p@ss word')}@127.0.0.1:${port}/?tls.rejectUnauthorized=false`;

describe('without a relay', () => {
  it('writes each message to the outbox as a two-part e-mail', async () => {
    const dataDir = tempDir();
    const mailer = createMailer({ config: { from: 'Plinth <no-reply@localhost>' }, dataDir, log, now });
    await mailer.send(mail);
    const all = readdirSync(join(dataDir, 'outbox'));
    const files = all.filter((file) => file.endsWith('.eml'));
    expect(files).toHaveLength(1);
    // A plain copy for the local outbox page sits beside it.
    const plain = JSON.parse(readFileSync(join(dataDir, 'outbox', files[0]!.replace(/\.eml$/, '.json')), 'utf8'));
    expect(plain).toMatchObject({ to: 'friend@example.com', subject: 'You are invited to blue-site' });
    expect(all).toHaveLength(2);
    expect(files[0]).toMatch(/^2026-01-02T03-04-05-000Z-friend@example\.com-[0-9a-f]{6}\.eml$/);
    const parsed = await simpleParser(readFileSync(join(dataDir, 'outbox', files[0]!)));
    expect(parsed.subject).toBe('You are invited to blue-site');
    expect(parsed.to).toMatchObject({ text: 'friend@example.com' });
    expect(parsed.from?.value[0]).toMatchObject({ name: 'Plinth', address: 'no-reply@localhost' });
    expect(parsed.text).toContain('http://app.localhost/invites/inv_x?a=1&b=<2>');
    // The HTML part escapes what it interpolates.
    expect(parsed.html).toContain('href="http://app.localhost/invites/inv_x?a=1&amp;b=&lt;2&gt;"');
    expect(parsed.html).not.toContain('b=<2>');
  });
});

describe('through an SMTP relay', () => {
  it('upgrades to TLS, authenticates and delivers both parts', async () => {
    const { port, received } = await startSmtp();
    const mailer = createMailer({ config: { from: 'Plinth <no-reply@example.com>', smtpUrl: relayUrl(port) }, dataDir: tempDir(), log, now });
    await mailer.send(mail);
    mailer.close();
    expect(received).toHaveLength(1);
    const [message] = received;
    expect(message!.secure).toBe(true);
    expect(message!.user).toBe('relay-user');
    expect(message!.parsed.subject).toBe('You are invited to blue-site');
    expect(message!.parsed.text).toContain('owner@example.com invited you to the site http://blue-site.sites.localhost as editor.');
    expect(message!.parsed.html).toContain('Review the invitation');
  });

  it('fails when the relay refuses the recipient', async () => {
    const { port } = await startSmtp({ refuseRecipient: true });
    const mailer = createMailer({ config: { from: 'Plinth <no-reply@example.com>', smtpUrl: relayUrl(port) }, dataDir: tempDir(), log, now });
    await expect(mailer.send(mail)).rejects.toThrow(/Mailbox unavailable/);
    mailer.close();
  });

  it('fails when the credentials are wrong', async () => {
    const { port } = await startSmtp();
    const url = `smtp://relay-user:wrong@127.0.0.1:${port}/?tls.rejectUnauthorized=false`;
    const mailer = createMailer({ config: { from: 'Plinth <no-reply@example.com>', smtpUrl: url }, dataDir: tempDir(), log, now });
    await expect(mailer.send(mail)).rejects.toThrow(/Invalid credentials|535/);
    mailer.close();
  });
});
