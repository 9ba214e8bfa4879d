import { describe, expect, it } from 'vitest';
import { api } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { linkIn, mailTo, startAppServer } from './browser.js';
import { AppClient } from './http-client.js';

/**
 * Issue 24, defect 6: what the app's pages say. One-click token revocation, copy buttons that do
 * nothing without script, signed-out claim and invite pages that name nothing, a local install's
 * "check your e-mail" with no mail, a claim button offered to a full account, a delete
 * confirmation that does not say what it accepts, and "a editor", "1 files", "this token".
 */

let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

const server = useAppServer();

async function personWithToken(who: string): Promise<{ client: AppClient; address: string; token: string }> {
  const client = new AppClient(server);
  const address = email(who);
  await client.signIn(address);
  await client.post('/tokens', { name: 'laptop', csrf: await client.formToken('/tokens') });
  const token = /id="new-token">([^<]+)</.exec((await client.get('/tokens')).text)![1]!;
  return { client, address, token };
}

const textOf = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('API tokens', () => {
  it('revoking asks first: the list links to a page with Revoke and Cancel; only its POST revokes', async () => {
    const { client, token } = await personWithToken('revoker');
    const list = await client.get('/tokens');
    expect(list.text).not.toMatch(/<form method="post" action="\/tokens\/tok_[^"]+\/revoke"/);
    const href = /href="(\/tokens\/tok_[^"]+\/revoke)"/.exec(list.text)![1]!;
    const ask = await client.get(href);
    expect(ask.status).toBe(200);
    expect(textOf(ask.text)).toContain('Revoke the token “laptop”?');
    expect(ask.text).toContain('href="/tokens" class="button-secondary">Cancel</a>');
    expect((await api(server, { path: '/v1/me', token })).status).toBe(200);
    const revoked = await client.post(href, { csrf: await client.formToken(href) });
    expect(revoked.status).toBe(303);
    expect((await api(server, { path: '/v1/me', token })).status).toBe(401);
  });

  it('a new token is selectable text; its copy button is hidden until the script shows it', async () => {
    const client = new AppClient(server);
    await client.signIn(email('copier'));
    await client.post('/tokens', { name: 'x', csrf: await client.formToken('/tokens') });
    const page = await client.get('/tokens');
    expect(page.text).toContain('class="token" id="new-token"');
    expect(page.text).toMatch(/<p data-js-only hidden><button type="button" class="button-secondary" data-copy="new-token">/);
  });
});

describe('signed-out claim and invite pages', () => {
  it('the claim page names the site and its address', async () => {
    const deploy = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
    const page = await new AppClient(server).get(new URL(deploy.json.claim_url).pathname);
    expect(page.status).toBe(200);
    expect(textOf(page.text)).toContain(`Claim ${deploy.json.site.name}`);
    expect(page.text).toContain(deploy.json.site.url);
    expect(textOf(page.text)).toContain('1 file,');
  });

  it('the invitation names the site, the role and the invited address, and fills it in for sign-in', async () => {
    const { token } = await personWithToken('inviter');
    const created = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>t</h1>' }] } });
    const name = created.json.site.name as string;
    const invitee = email('invitee');
    await api(server, { method: 'POST', path: `/v1/sites/${name}/members`, token, body: { email: invitee, role: 'editor' } });
    const path = new URL(linkIn(await mailTo(server, invitee), `${server.appUrl}/invites/inv_`)).pathname;
    const client = new AppClient(server);
    const page = await client.get(path);
    expect(page.status).toBe(200);
    const text = textOf(page.text);
    expect(text).toContain(`Join ${name}?`);
    expect(text).toContain(`invited ${invitee} to`);
    expect(text).toContain('as editor');
    const login = /href="(\/login\?next=[^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect((await client.get(login)).text).toContain(`value="${invitee}"`);
  });
});

describe('sign-in on a local install', () => {
  it('"check your e-mail" points to the outbox', async () => {
    const client = new AppClient(server);
    await client.startSignIn(email('local'));
    const page = await client.get('/login/check');
    expect(page.text).toContain('<a href="/outbox">outbox</a>');
  });

  it('says nothing of an outbox when e-mail really goes out', async () => {
    const relayed = await startAppServer({ PLINTH_OUTBOX_PAGE: '0' });
    try {
      const client = new AppClient(relayed);
      await client.startSignIn(email('relayed'));
      expect((await client.get('/login/check')).text).not.toContain('/outbox');
    } finally {
      await relayed.close();
    }
  });
});

describe('claiming into a full account', () => {
  it('says so before any button', async () => {
    const limited = await startAppServer({ PLINTH_SITES_LIMIT_FREE: '0' });
    try {
      const deploy = await api(limited, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
      const client = new AppClient(limited);
      await client.signIn(email('full'));
      const page = await client.get(new URL(deploy.json.claim_url).pathname);
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Your plan has no room for another site');
      expect(page.text).not.toContain('Claim this site</button>');
    } finally {
      await limited.close();
    }
  });
});

describe('deleting and removing', () => {
  it('the delete confirmation says it takes the name or the address, and has Cancel', async () => {
    const { client, token } = await personWithToken('deleter');
    const created = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>t</h1>' }] } });
    const name = created.json.site.name as string;
    const requested = await api(server, { method: 'DELETE', path: `/v1/sites/${name}`, token });
    const page = await client.get(new URL(requested.json.approve_url).pathname);
    expect(textOf(page.text)).toMatch(new RegExp(`The name alone \\( ?${name} ?\\) or the whole address is accepted`));
    expect(page.text).toContain(`<a class="button-secondary" href="/sites/${name}">Cancel</a>`);
  });

  it('says "an editor", and a signed-in 404 speaks of the person’s sites, not of a token', async () => {
    const owner = await personWithToken('owner');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>t</h1>' }] },
    });
    const name = created.json.site.name as string;
    const editor = await personWithToken('editor');
    await server.store.setMember(server.store.getSite(name)!.id, server.store.getAccountByEmail(editor.address)!.id, 'editor');
    const removal = await owner.client.post(`/sites/${name}/members/remove`, { email: editor.address, csrf: await owner.client.formToken(`/sites/${name}`) });
    const confirm = await owner.client.get(removal.headers.location!);
    expect(textOf(confirm.text)).toContain(`${editor.address} is an editor of ${name}`);
    const requested = await api(server, { method: 'DELETE', path: `/v1/sites/${name}`, token: owner.token });
    const refused = await editor.client.get(new URL(requested.json.approve_url).pathname);
    expect(textOf(refused.text)).toContain('an editor of the site');
    expect(textOf(refused.text)).not.toContain('a editor');

    const missing = await editor.client.get('/sites/no-such-site-here');
    expect(missing.status).toBe(404);
    expect(textOf(missing.text)).toContain('There is no site named no-such-site-here that you can see.');
    expect(textOf(/<div class="message">([\s\S]*?)<\/div>/.exec(missing.text)![1]!)).not.toContain('token');
  });
});
