import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import type { MailConfig } from '../config.js';
import type { Logger } from '../log.js';

/**
 * Outgoing e-mail (sign-in links, invites, report receipts), through nodemailer. With
 * `PLINTH_SMTP_URL` set, each message goes to that relay (STARTTLS when offered, AUTH from the
 * URL's user and password; nodemailer's URL options such as `?tls.rejectUnauthorized=false` for
 * a private relay are honoured). Without it, messages are composed the same way and written as
 * `.eml` files to `<dataDir>/outbox/`, so a local install (and the tests) can read them.
 */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  config: MailConfig;
  dataDir: string;
  log: Logger;
  now: () => number;
  /** Connection, greeting and socket timeout for the relay. */
  timeoutMs?: number;
}

/**
 * nodemailer is loaded with the first message: most processes (an admin command, a server that
 * sends no mail before it stops) never send one, and loading it cost each of them a tenth of a second.
 */
let nodemailer: Promise<typeof import('nodemailer')> | undefined;
const loadNodemailer = (): Promise<typeof import('nodemailer')> => (nodemailer ??= import('nodemailer'));

export function createMailer(options: MailerOptions): Mailer {
  const { config, log } = options;
  const timeout = options.timeoutMs ?? 15_000;
  let smtp: Transporter | undefined;
  let composer: Transporter | undefined;
  const outbox = join(options.dataDir, 'outbox');

  return {
    async send(mail) {
      const message = { from: config.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, date: new Date(options.now()) };
      const { default: mailer } = await loadNodemailer();
      if (config.smtpUrl !== undefined) {
        smtp ??= mailer.createTransport({ url: config.smtpUrl, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout });
        await smtp.sendMail(message);
        log.info({ to: mail.to }, 'mail.sent');
        return;
      }
      composer ??= mailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
      const composed = await composer.sendMail(message);
      await mkdir(outbox, { recursive: true });
      const stamp = new Date(options.now()).toISOString().replace(/[:.]/g, '-');
      const file = join(outbox, `${stamp}-${mail.to.replace(/[^a-zA-Z0-9@._+-]/g, '_')}-${randomBytes(3).toString('hex')}.eml`);
      await writeFile(file, composed.message as Buffer, { flag: 'wx', mode: 0o600 });
      // A plain copy beside it for the local outbox page, which has no MIME parser.
      const plain = { to: mail.to, subject: mail.subject, text: mail.text, date: message.date.toISOString() };
      await writeFile(file.replace(/\.eml$/, '.json'), JSON.stringify(plain), { flag: 'wx', mode: 0o600 });
      log.info({ to: mail.to, file }, 'mail.written');
    },
    close() {
      smtp?.close();
    },
  };
}
