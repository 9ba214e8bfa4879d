import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import type { MailConfig } from '../config.js';
import type { Logger } from '../log.js';

/**
 * Outgoing e-mail (invites). With `PLINTH_SMTP_URL` set, each message goes through that relay with
 * a small SMTP client (RFC 5321: EHLO, STARTTLS when offered, AUTH PLAIN, MAIL/RCPT/DATA); no
 * dependency is needed for plain-text mail. Without it, messages land as `.eml` files in
 * `<dataDir>/outbox/` so a local install (and the tests) can read them.
 */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export interface MailerOptions {
  config: MailConfig;
  dataDir: string;
  log: Logger;
  now: () => number;
  /** Socket timeout for each SMTP step. */
  timeoutMs?: number;
}

export function createMailer(options: MailerOptions): Mailer {
  const { config, log } = options;
  return {
    async send(mail) {
      const message = formatMessage(config.from, mail, options.now());
      if (config.smtpUrl === undefined) {
        const dir = join(options.dataDir, 'outbox');
        await mkdir(dir, { recursive: true });
        const stamp = new Date(options.now()).toISOString().replace(/[:.]/g, '-');
        const file = join(dir, `${stamp}-${mail.to.replace(/[^a-zA-Z0-9@._+-]/g, '_')}-${randomBytes(3).toString('hex')}.eml`);
        await writeFile(file, message, { flag: 'wx', mode: 0o600 });
        log.info({ to: mail.to, file }, 'mail.written');
        return;
      }
      await sendSmtp(new URL(config.smtpUrl), addressOf(config.from), mail.to, message, options.timeoutMs ?? 15_000);
      log.info({ to: mail.to }, 'mail.sent');
    },
  };
}

/** A plain-text RFC 5322 message with CRLF line ends. */
export function formatMessage(from: string, mail: Mail, now: number): string {
  const domain = addressOf(from).split('@')[1] ?? 'localhost';
  const headers = [
    `From: ${from}`,
    `To: ${mail.to}`,
    `Subject: ${encodeHeader(mail.subject)}`,
    `Date: ${new Date(now).toUTCString()}`,
    `Message-ID: <${randomBytes(12).toString('hex')}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
  ];
  const body = mail.text.replace(/\r?\n/g, '\r\n');
  return `${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
}

/** `Name <a@b>` → `a@b`. */
function addressOf(from: string): string {
  const match = /<([^>]+)>/.exec(from);
  return (match ? match[1]! : from).trim();
}

function encodeHeader(value: string): string {
  const oneLine = value.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(oneLine) ? oneLine : `=?utf-8?B?${Buffer.from(oneLine, 'utf8').toString('base64')}?=`;
}

type AnySocket = Socket | TLSSocket;

/** One SMTP session delivering one message; rejects on any unexpected reply. */
async function sendSmtp(url: URL, from: string, to: string, message: string, timeoutMs: number): Promise<void> {
  const implicitTls = url.protocol === 'smtps:';
  const port = Number(url.port || (implicitTls ? 465 : 587));
  const host = url.hostname;
  let socket: AnySocket = implicitTls ? connectTls({ host, port, servername: host }) : connectTcp({ host, port });
  let reader = replyReader(socket, timeoutMs);
  try {
    await reader.next(220);
    let features = await ehlo();
    if (!implicitTls && features.some((line) => /^STARTTLS\b/i.test(line))) {
      await command('STARTTLS', 220);
      reader.detach();
      socket = await upgrade(socket as Socket, host);
      reader = replyReader(socket, timeoutMs);
      features = await ehlo();
    }
    if (url.username !== '') {
      const user = decodeURIComponent(url.username);
      const pass = decodeURIComponent(url.password);
      await command(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`, 'utf8').toString('base64')}`, 235);
    }
    await command(`MAIL FROM:<${from}>`, 250);
    await command(`RCPT TO:<${to}>`, 250, 251);
    await command('DATA', 354);
    // Dot-stuffing: a line starting with "." gets another one (RFC 5321 4.5.2).
    socket.write(`${message.replace(/^\./gm, '..')}.\r\n`);
    await reader.next(250);
    socket.write('QUIT\r\n');
    await reader.next(221).catch(() => undefined);
  } finally {
    reader.detach();
    socket.destroy();
  }

  async function ehlo(): Promise<string[]> {
    socket.write(`EHLO ${from.split('@')[1] ?? 'localhost'}\r\n`);
    return reader.next(250);
  }
  async function command(line: string, ...ok: number[]): Promise<string[]> {
    socket.write(`${line}\r\n`);
    return reader.next(...ok);
  }
}

function upgrade(socket: Socket, host: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = connectTls({ socket, servername: host }, () => resolve(tls));
    tls.once('error', reject);
  });
}

interface ReplyReader {
  /** The next complete (possibly multi-line) reply; rejects unless its code is one of `ok`. */
  next(...ok: number[]): Promise<string[]>;
  detach(): void;
}

function replyReader(socket: AnySocket, timeoutMs: number): ReplyReader {
  let buffer = '';
  let lines: string[] = [];
  const replies: Array<{ code: number; lines: string[] }> = [];
  let waiting: { resolve: () => void; reject: (err: Error) => void } | undefined;
  let failure: Error | undefined;

  const wake = (): void => {
    const w = waiting;
    waiting = undefined;
    if (!w) return;
    if (failure && replies.length === 0) w.reject(failure);
    else w.resolve();
  };
  const onData = (chunk: Buffer): void => {
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      lines.push(line.slice(4));
      // "250-..." continues a reply; "250 ..." ends it.
      if (line[3] !== '-') {
        replies.push({ code: Number(line.slice(0, 3)), lines });
        lines = [];
      }
    }
    wake();
  };
  const onError = (err: Error): void => {
    failure = err;
    wake();
  };
  const onClose = (): void => onError(new Error('SMTP server closed the connection'));
  const onTimeout = (): void => {
    onError(new Error('SMTP server timed out'));
    socket.destroy();
  };
  socket.on('data', onData);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.setTimeout(timeoutMs, onTimeout);

  return {
    async next(...ok) {
      while (replies.length === 0) {
        if (failure) throw failure;
        await new Promise<void>((resolve, reject) => (waiting = { resolve, reject }));
      }
      const reply = replies.shift()!;
      if (!ok.includes(reply.code)) throw new Error(`SMTP server answered ${reply.code} ${reply.lines.join(' ')}`);
      return reply.lines;
    },
    detach() {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      socket.setTimeout(0);
      // A late error on a socket nobody reads any more must not crash the thread.
      socket.on('error', () => undefined);
    },
  };
}
