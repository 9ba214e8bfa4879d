import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMailer } from '../../src/api/mailer.js';
import { createLogger } from '../../src/log.js';
import { tempDir } from '../helpers/sites.js';

/**
 * The invite mailer: outbox files without SMTP, and the SMTP client against a minimal relay on
 * loopback (the relay stands in for the mail server outside the process).
 */

const log = createLogger({ level: 'silent' });
const now = () => Date.UTC(2026, 0, 2, 3, 4, 5);
const mail = { to: 'friend@example.com', subject: 'You are invited to blue-site', text: 'Hello\n.hidden line\nhttp://app.localhost/invites/inv_x' };

interface Session {
  commands: string[];
  data: string;
}

let relay: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
  relay = undefined;
});

/** A tiny SMTP relay: answers each command, optionally refusing one, and records the session. */
async function startRelay(options: { refuse?: string; auth?: boolean } = {}): Promise<{ port: number; sessions: Session[] }> {
  const sessions: Session[] = [];
  relay = createServer((socket: Socket) => {
    const session: Session = { commands: [], data: '' };
    sessions.push(session);
    let inData = false;
    let buffer = '';
    socket.write('220 relay ready\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            socket.write('250 queued\r\n');
          } else {
            session.data += `${line}\n`;
          }
          continue;
        }
        session.commands.push(line);
        const verb = line.split(' ')[0]!.toUpperCase();
        if (options.refuse && line.startsWith(options.refuse)) socket.write('550 no such user\r\n');
        else if (verb === 'EHLO') socket.write(`250-relay\r\n${options.auth ? '250-AUTH PLAIN\r\n' : ''}250 8BITMIME\r\n`);
        else if (verb === 'AUTH') socket.write('235 ok\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
        } else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve));
  const address = relay.address();
  return { port: typeof address === 'object' && address ? address.port : 0, sessions };
}

describe('mailer', () => {
  it('writes a readable .eml to the outbox when no SMTP relay is configured', async () => {
    const dataDir = tempDir('plinth-mail-');
    await createMailer({ config: { from: 'Plinth <no-reply@localhost>' }, dataDir, log, now }).send(mail);
    const [file] = readdirSync(join(dataDir, 'outbox'));
    expect(file).toMatch(/^2026-01-02T03-04-05-000Z-friend@example\.com-[0-9a-f]{6}\.eml$/);
    const text = readFileSync(join(dataDir, 'outbox', file!), 'utf8');
    expect(text).toContain('From: Plinth <no-reply@localhost>\r\n');
    expect(text).toContain('To: friend@example.com\r\n');
    expect(text).toContain('Subject: You are invited to blue-site\r\n');
    expect(text).toContain('\r\n\r\nHello\r\n.hidden line\r\nhttp://app.localhost/invites/inv_x\r\n');
  });

  it('delivers through SMTP with AUTH PLAIN and dot-stuffing', async () => {
    const { port, sessions } = await startRelay({ auth: true });
    const mailer = createMailer({ config: { from: 'Plinth <no-reply@example.org>', smtpUrl: `smtp://me%40x:p%3Ass@127.0.0.1:${port}` }, dataDir: tempDir(), log, now });
    await mailer.send(mail);
    const [session] = sessions;
    expect(session!.commands).toEqual([
      'EHLO example.org',
      `AUTH PLAIN ${Buffer.from('\0me@x\0p:ss').toString('base64')}`,
      'MAIL FROM:<no-reply@example.org>',
      'RCPT TO:<friend@example.com>',
      'DATA',
      'QUIT',
    ]);
    expect(session!.data).toContain('To: friend@example.com\n');
    // The relay sees the stuffed line; receivers remove the extra dot.
    expect(session!.data).toContain('\n..hidden line\n');
  });

  it('fails when the relay refuses the recipient', async () => {
    const { port } = await startRelay({ refuse: 'RCPT' });
    const mailer = createMailer({ config: { from: 'no-reply@example.org', smtpUrl: `smtp://127.0.0.1:${port}` }, dataDir: tempDir(), log, now });
    await expect(mailer.send(mail)).rejects.toThrow(/550/);
  });

  it('fails when nothing listens', async () => {
    const { port } = await startRelay();
    await new Promise<void>((resolve) => relay!.close(() => resolve()));
    relay = undefined;
    const mailer = createMailer({ config: { from: 'no-reply@example.org', smtpUrl: `smtp://127.0.0.1:${port}` }, dataDir: tempDir(), log, now });
    await expect(mailer.send(mail)).rejects.toThrow();
  });
});
