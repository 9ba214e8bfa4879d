import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { html } from 'hono/html';
import { page, type AppDeps, type PageRoute } from '../context.js';
import type { Html } from '../layout.js';

interface StoredMail {
  to: string;
  subject: string;
  text: string;
  date: string;
}

const URL_PATTERN = /(https?:\/\/[^\s<>"']+)/g;

/** Plain text with its addresses made into links, every piece escaped. */
function linkify(text: string): Html[] {
  return text.split(URL_PATTERN).map((part, index) => (index % 2 === 1 ? html`<a href="${part}">${part}</a>` : html`${part}`));
}

/**
 * `/outbox`: the e-mails a local install wrote instead of sending (sign-in links, invites), so a
 * person can sign in without a mail server. Only on when `PLINTH_OUTBOX_PAGE` allows it.
 */
export function outboxRoutes(deps: AppDeps): PageRoute[] {
  const dir = join(deps.config.dataDir, 'outbox');
  return [
    {
      method: 'GET',
      path: '/outbox',
      async handle(context) {
        const names = (await readdir(dir).catch(() => [] as string[]))
          .filter((name) => name.endsWith('.json'))
          .sort()
          .reverse()
          .slice(0, 50);
        const mails = await Promise.all(names.map(async (name) => JSON.parse(await readFile(join(dir, name), 'utf8')) as StoredMail));
        return page(context, {
          title: 'Outbox',
          body: html`<h1>Outbox</h1>
<p>This server has no mail relay (<code>PLINTH_SMTP_URL</code>), so e-mails are kept here, newest first. This page exists only on local installs.</p>
${mails.length === 0 ? html`<p>No e-mails yet.</p>` : ''}
${mails.map(
  (mail) => html`<article class="mail">
  <h2>${mail.subject}</h2>
  <p class="hint">To ${mail.to}, ${mail.date}</p>
  <div class="mail-text">${linkify(mail.text)}</div>
</article>`,
)}`,
        });
      },
    },
  ];
}
