import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiToken } from '../../src/sites/tokens.js';
import { hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, api, visit } from '../api/api-helpers.js';
import { inspectPage, linkIn, mailTo, openPage, signIn } from './browser.js';
import { signInOverHttp } from './http-client.js';
import { useAppServer, useBrowser } from '../helpers/fixtures.js';

/**
 * The account app end to end, as a person uses it: real Chromium, real server, mail from the
 * outbox. One browser and one server for the file, a browser context (its own cookies) per
 * person. The flows run one after the other: side by side (describe.concurrent, three at a time)
 * they took 86 s against 68 s on two cores, each step waiting behind the others' pages.
 */

let counter = 0;
const email = (who: string): string => `${who}-${Date.now().toString(36)}${++counter}@example.com`;
const PLINTH = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
/** The admin CLI, run without blocking: the server runs in this thread. */
const runPlinth = promisify(execFile);

const browser = useBrowser();

const server = useAppServer();

/** An anonymous deploy, as an agent makes it. */
async function anonymousDeploy(html = '<!doctype html><html lang="en"><head><title>Hi</title></head><body><h1>Hello</h1></body></html>') {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: html }] } });
  expect(res.status, res.text).toBe(201);
  return res.json as { site: { name: string; url: string }; site_token: string; claim_url: string; revision: { id: string } };
}

/**
 * A new person, signed in over HTTP (signInOverHttp): the flows that use this are about what
 * comes after the sign-in.
 */
async function signedInPerson(who: string) {
  const address = email(who);
  const { context, page } = await openPage(browser);
  await signInOverHttp(context, server, address);
  return { address, context, page };
}

/** A new person, signed in, who makes an API token through the tokens page; returns both. */
async function personWithToken(who: string) {
  const person = await signedInPerson(who);
  await person.page.goto(`${server.appUrl}/tokens`);
  await person.page.getByLabel('Token name').fill('tests');
  await person.page.getByRole('button', { name: 'Create token' }).click();
  const token = (await person.page.locator('#new-token').textContent())!.trim();
  return { ...person, token };
}

/**
 * A new person, signed in, with an API token made in the store, as the tokens page makes it: for
 * the flows that only use the token (the tokens page has flows of its own, and costs two page loads).
 */
async function personWithApiToken(who: string) {
  const person = await signedInPerson(who);
  const token = newApiToken();
  await server.store.addApiToken({ accountId: server.store.getAccountByEmail(person.address)!.id, tokenHash: hashToken(token), name: 'tests' });
  return { ...person, token };
}

describe('claiming an anonymous site', () => {
  it('signs in through the e-mailed link, claims, and the site token learns it', async () => {
    const deploy = await anonymousDeploy();
    expect(deploy.claim_url.startsWith(`${server.appUrl}/claim/ct_`)).toBe(true);
    const address = email('claimer');
    const { context, page, errors } = await openPage(browser);

    // Signed out, the claim page names the site before it asks for a sign-in.
    await page.goto(deploy.claim_url);
    await expect.poll(() => page.getByRole('heading', { name: `Claim ${deploy.site.name}` }).count()).toBe(1);
    expect(await page.getByRole('link', { name: deploy.site.url }).count()).toBe(1);
    await inspectPage(page, 'claim-signed-out');
    await page.getByRole('link', { name: `Sign in to claim ${deploy.site.name}` }).click();
    expect(new URL(page.url()).pathname).toBe('/login');
    await inspectPage(page, 'login');
    await signIn(page, server, address);

    // Back on the claim page after signing in.
    expect(page.url()).toBe(deploy.claim_url);
    await expect.poll(() => page.getByRole('heading', { name: `Claim ${deploy.site.name}` }).count()).toBe(1);
    await inspectPage(page, 'claim');
    await page.getByLabel('Let the agent that published this keep updating it').check();
    await page.getByRole('button', { name: 'Claim this site' }).click();

    await expect.poll(() => page.getByRole('status').textContent()).toContain('The site is yours now');
    expect(new URL(page.url()).pathname).toBe(`/sites/${deploy.site.name}`);
    await inspectPage(page, 'site');

    const poll = await api(server, { path: `/v1/sites/${deploy.site.name}`, token: deploy.site_token });
    expect(poll.status).toBe(200);
    expect(poll.json).toEqual({ claimed: true, account_token: expect.stringMatching(/^pl_/), agent_message: expect.stringContaining('"api_token"') });
    // Handed out once.
    expect((await api(server, { path: `/v1/sites/${deploy.site.name}`, token: deploy.site_token })).json).toEqual({
      claimed: true,
      agent_message: expect.any(String),
    });
    // The agent's token works for the account and is listed on /tokens.
    const me = await api(server, { path: '/v1/me', token: poll.json.account_token });
    expect(me.json).toMatchObject({ email: address, plan: 'free', sites_used: 1 });
    await page.goto(`${server.appUrl}/tokens`);
    const tokens = page.getByRole('table', { name: 'Your API tokens' });
    await expect.poll(() => tokens.getByRole('row', { name: new RegExp(`Agent that published ${deploy.site.name}`) }).count()).toBe(1);
    // The site no longer expires and the site token can do nothing else.
    expect((await api(server, { path: `/v1/sites/${deploy.site.name}`, token: poll.json.account_token })).json).toMatchObject({ claimed: true, role: 'owner' });
    expect((await api(server, { path: `/v1/sites/${deploy.site.name}/files`, token: deploy.site_token })).status).toBe(403);

    // The link is used up.
    await page.goto(deploy.claim_url);
    await expect.poll(() => page.getByRole('heading', { name: 'This claim link does not work' }).count()).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('refuses a claim over the plan’s site limit and changes nothing', async () => {
    // A person whose free plan is full already: as many sites as it allows.
    const full = await accountWithToken(server.store, 'free');
    for (let i = 0; i < server.config.api.sitesLimit.free; i++) await accountSite(server.store, full);
    const res = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
    // Signed in over HTTP: the way back from the sign-in to the claim page is the flow above.
    const { context, page } = await openPage(browser);
    await signInOverHttp(context, server, full.account.email);
    await page.goto(res.json.claim_url);
    // Said before any button, rather than a refusal after it.
    await expect.poll(() => page.getByRole('heading', { name: 'Your plan has no room for another site' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Claim this site' }).count()).toBe(0);
    await inspectPage(page, 'claim-full');
    const poll = await api(server, { path: `/v1/sites/${res.json.site.name}`, token: res.json.site_token });
    expect(poll.json).toMatchObject({ claimed: false, plan: 'anonymous' });
    await context.close();
  });
});

describe('people', () => {
  it('invites by e-mail; the invitee signs in and accepts', async () => {
    const owner = await personWithApiToken('owner');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>team</h1>' }] },
    });
    const name = created.json.site.name as string;
    const invitee = email('invitee');

    await owner.page.goto(`${server.appUrl}/sites/${name}`);
    await owner.page.getByLabel('E-mail address').fill(invitee);
    await owner.page.getByLabel('Role').selectOption('editor');
    await owner.page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => owner.page.getByRole('status').textContent()).toContain(`An invitation was e-mailed to ${invitee}`);
    await expect
      .poll(() =>
        owner.page
          .getByRole('region', { name: 'Members and pending invitations' })
          .getByRole('row', { name: new RegExp(invitee) })
          .count(),
      )
      .toBe(1);

    const mail = await mailTo(server, invitee);
    expect(mail.subject).toBe(`You are invited to ${name}`);
    expect(mail.html).toBeTruthy();
    const accept = linkIn(mail, `${server.appUrl}/invites/inv_`);

    // Someone else signed in sees a clear page, and nothing changes.
    const stranger = await openPage(browser);
    await stranger.page.goto(accept);
    await stranger.page.getByRole('link', { name: `Sign in as ${invitee}` }).click();
    await signIn(stranger.page, server, email('stranger'));
    await expect.poll(() => stranger.page.getByRole('heading', { name: 'This invitation is for someone else' }).count()).toBe(1);
    await stranger.context.close();

    const { context, page } = await openPage(browser);
    // Signed out, the invitation names the site and the invited address.
    await page.goto(accept);
    await expect.poll(() => page.getByRole('heading', { name: `Join ${name}?` }).count()).toBe(1);
    expect(await page.getByText(`invited ${invitee} to`).count()).toBe(1);
    await inspectPage(page, 'invite-signed-out');
    await page.getByRole('link', { name: `Sign in as ${invitee}` }).click();
    expect(await page.getByLabel('E-mail address').inputValue()).toBe(invitee);
    await signIn(page, server, invitee);
    await expect.poll(() => page.getByRole('heading', { name: `Join ${name}?` }).count()).toBe(1);
    await inspectPage(page, 'invite');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('You joined this site as editor');

    const members = await api(server, { path: `/v1/sites/${name}/members`, token: owner.token });
    expect(members.json.members).toContainEqual({ email: invitee, role: 'editor' });
    expect(members.json.invites).toEqual([]);
    await context.close();

    // The owner removes them with the confirm step.
    await owner.page.goto(`${server.appUrl}/sites/${name}`);
    await owner.page.getByRole('button', { name: `Remove ${invitee}` }).click();
    await expect.poll(() => owner.page.getByRole('heading', { name: `Remove ${invitee} from ${name}?` }).count()).toBe(1);
    await inspectPage(owner.page, 'remove-member');
    await owner.page.getByRole('button', { name: `Remove ${invitee}` }).click();
    await expect.poll(() => owner.page.getByRole('status').textContent()).toContain(`${invitee} no longer has access`);
    expect((await api(server, { path: `/v1/sites/${name}/members`, token: owner.token })).json.members).toEqual([{ email: owner.address, role: 'owner' }]);
    await owner.context.close();
  });

  it('removing a member also withdraws their pending invite', async () => {
    const owner = await personWithApiToken('owner2');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] },
    });
    const name = created.json.site.name as string;
    const member = await signedInPerson('member');
    // The member joins as viewer, then gets a second (editor) invite that is still pending.
    await api(server, { method: 'POST', path: `/v1/sites/${name}/members`, token: owner.token, body: { email: member.address, role: 'viewer' } });
    const invite = await mailTo(server, member.address);
    await member.page.goto(linkIn(invite, `${server.appUrl}/invites/inv_`));
    await member.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => member.page.getByRole('status').textContent()).toContain('joined');
    await member.context.close();
    // Inviting an existing member is refused; a pending invite for them can only come from before.
    const again = await api(server, { method: 'POST', path: `/v1/sites/${name}/members`, token: owner.token, body: { email: member.address, role: 'editor' } });
    expect(again.status).toBe(400);
    const first = await api(server, { method: 'DELETE', path: `/v1/sites/${name}/members/${member.address}`, token: owner.token });
    const removed = await api(server, {
      method: 'DELETE',
      path: `/v1/sites/${name}/members/${member.address}?confirm=${first.json.confirm_token}`,
      token: owner.token,
    });
    expect(removed.status).toBe(200);
    const after = await api(server, { path: `/v1/sites/${name}/members`, token: owner.token });
    expect(after.json.invites).toEqual([]);
    await owner.context.close();
  });
});

describe('deletion approval', () => {
  it('deletes only after an owner types the address', async () => {
    const owner = await personWithApiToken('deleter');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>bye</h1>' }] },
    });
    const name = created.json.site.name as string;
    const requested = await api(server, { method: 'DELETE', path: `/v1/sites/${name}`, token: owner.token });
    expect(requested.status).toBe(202);
    const approveUrl = requested.json.approve_url as string;
    expect(approveUrl.startsWith(`${server.appUrl}/approve/ap_`)).toBe(true);

    const { page } = owner;
    await page.goto(approveUrl);
    await expect.poll(() => page.getByRole('heading', { name: `Delete ${name}?` }).count()).toBe(1);
    await inspectPage(page, 'approve');
    await page.getByLabel(/Type the site's address to confirm/).fill('some-other-site.sites.localhost');
    await page.getByRole('button', { name: `Delete ${name} permanently` }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(`That is not the address of ${name}`);
    expect((await visit(server, name)).status).toBe(200);

    await page.getByLabel(/Type the site's address to confirm/).fill(`${name}.sites.localhost:${new URL(server.appUrl).port}`);
    await page.getByRole('button', { name: `Delete ${name} permanently` }).click();
    await expect.poll(() => page.getByRole('heading', { name: `${name} was deleted` }).count()).toBe(1);

    expect((await visit(server, name)).status).toBe(410);
    expect((await api(server, { path: `/v1/sites/${name}`, token: owner.token })).status).toBe(410);
    const approval = await api(server, { path: `/v1/approvals/${requested.json.approval.token}` });
    expect(approval.json).toMatchObject({ status: 'approved', deleted_at: expect.any(String) });
    await owner.context.close();
  });

  it('an editor cannot approve, and nothing is deleted', async () => {
    const owner = await personWithApiToken('owner3');
    const created = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<h1>keep</h1>' }] },
    });
    const name = created.json.site.name as string;
    const editor = await signedInPerson('editor');
    await api(server, { method: 'POST', path: `/v1/sites/${name}/members`, token: owner.token, body: { email: editor.address, role: 'editor' } });
    await editor.page.goto(linkIn(await mailTo(server, editor.address), `${server.appUrl}/invites/inv_`));
    await editor.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => editor.page.getByRole('status').textContent()).toContain('joined');
    const requested = await api(server, { method: 'DELETE', path: `/v1/sites/${name}`, token: owner.token });
    await editor.page.goto(requested.json.approve_url);
    await expect.poll(() => editor.page.getByRole('heading', { name: 'Only an owner can approve this' }).count()).toBe(1);
    expect((await visit(server, name)).status).toBe(200);
    await editor.context.close();
    await owner.context.close();
  });
});

describe('API tokens', () => {
  it('creates a token shown once, which works on /v1/me until it is revoked', async () => {
    const { address, token, context, page } = await personWithToken('tokens');
    expect(token).toMatch(/^pl_[A-Za-z0-9_-]{40,}$/);
    await inspectPage(page, 'tokens');
    const me = await api(server, { path: '/v1/me', token });
    expect(me.json).toMatchObject({ email: address, plan: 'free' });

    // Shown once: a reload does not show it again (and creates nothing).
    await page.reload();
    expect(await page.locator('#new-token').count()).toBe(0);
    await expect.poll(() => page.getByRole('region', { name: 'Your API tokens' }).getByRole('row', { name: /tests/ }).count()).toBe(1);

    // One click does not revoke: a page asks first, and Cancel changes nothing.
    await page.getByRole('link', { name: 'Revoke tests…' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Revoke the token “tests”?' }).count()).toBe(1);
    await inspectPage(page, 'revoke-token');
    await page.getByRole('link', { name: 'Cancel' }).click();
    expect((await api(server, { path: '/v1/me', token })).status).toBe(200);
    await page.getByRole('link', { name: 'Revoke tests…' }).click();
    await page.getByRole('button', { name: 'Revoke tests' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('revoked');
    expect((await api(server, { path: '/v1/me', token })).status).toBe(401);
    await context.close();
  });
});

describe('site page', () => {
  it('rolls back and renames', async () => {
    const { token, context, page } = await personWithApiToken('roller');
    const first = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>first</h1>' }] } });
    const name = first.json.site.name as string;
    await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token,
      body: { site: name, base_revision: first.json.revision.id, files: [{ path: 'index.html', content: '<h1>second</h1>' }] },
    });
    expect((await visit(server, name)).text).toContain('second');

    await page.goto(`${server.appUrl}/sites/${name}`);
    await page.getByRole('button', { name: 'Roll back to revision 1' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('the content of revision 1 is live again as revision 3');
    expect((await visit(server, name)).text).toContain('first');

    const newName = `renamed-${Date.now().toString(36)}`;
    await page.getByLabel('New name').fill('x');
    await page.getByRole('button', { name: 'Rename site' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('4 to 63 characters');
    await inspectPage(page, 'site-error');
    await page.getByLabel('New name').fill(newName);
    await page.getByRole('button', { name: 'Rename site' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(newName);
    expect((await visit(server, newName)).text).toContain('first');
    const old = await visit(server, name);
    expect(old.status).toBe(301);

    await page.goto(`${server.appUrl}/`);
    await inspectPage(page, 'sites');
    await page.goto(`${server.appUrl}/billing`);
    await expect.poll(() => page.getByRole('heading', { name: 'Plan and usage' }).count()).toBe(1);
    await inspectPage(page, 'billing');
    expect(await page.getByText('No payment is taken on this page').count()).toBe(1);
    await context.close();
  });

  it('shows the one-line deploy to a person with no sites', async () => {
    const { page, context } = await openPage(browser, 390);
    await signInOverHttp(context, server, email('empty'));
    await page.goto(`${server.appUrl}/`);
    await expect.poll(() => page.getByText('You have no sites yet').count()).toBe(1);
    expect(await page.locator('#deploy-command').textContent()).toContain(`${server.apiUrl}/v1/deploy`);
    await inspectPage(page, 'sites-empty');
    await context.close();
  });
});

describe('reports', () => {
  it('reports a site from its badge; the operator lists it with the admin CLI', async () => {
    const deploy = await anonymousDeploy();
    const { context, page, errors } = await openPage(browser);
    const visitor = await openPage(browser);
    await visitor.page.goto(deploy.site.url);
    // The badge opens the report form in a new tab.
    const opened = visitor.context.waitForEvent('page');
    await visitor.page.getByRole('link', { name: 'Report abuse' }).click();
    const reportPage = await opened;
    await reportPage.waitForLoadState('load');
    expect(reportPage.url()).toBe(`${server.appUrl}/report/${deploy.site.name}`);
    await visitor.context.close();
    await page.goto(`${server.appUrl}/report/${deploy.site.name}`);
    await inspectPage(page, 'report');
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Choose a reason');
    await page.getByLabel(/^Phishing/).check();
    await page.getByLabel('Details', { exact: true }).fill('It asks for my bank password. <script>alert(1)</script>');
    await page.getByLabel('Your e-mail address (optional)').fill('reporter@example.com');
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Thank you for your report' }).count()).toBe(1);
    expect((await mailTo(server, 'reporter@example.com')).subject).toContain('We received your report');

    const { stdout: listed } = await runPlinth(process.execPath, [PLINTH, 'admin', 'report', 'list'], {
      env: { ...process.env, PLINTH_DATA_DIR: server.dataDir },
      encoding: 'utf8',
    });
    const reports = listed
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; site: string; reason: string; details: string; contact: string });
    const mine = reports.find((report) => report.site === deploy.site.name);
    expect(mine).toMatchObject({ reason: 'phishing', contact: 'reporter@example.com', details: expect.stringContaining('bank password') });
    const { stdout: resolved } = await runPlinth(process.execPath, [PLINTH, 'admin', 'report', 'resolve', mine!.id, '--note', 'taken down'], {
      env: { ...process.env, PLINTH_DATA_DIR: server.dataDir },
      encoding: 'utf8',
    });
    expect(JSON.parse(resolved)).toMatchObject({ id: mine!.id, status: 'resolved', note: 'taken down' });
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('cross-site forms', () => {
  it('a page on a published site cannot make a signed-in person create a token', async () => {
    const { context, page, token } = await personWithToken('target');
    const before = (await api(server, { path: '/v1/me', token })).json;
    const attack = `<!doctype html><html lang="en"><head><title>win</title></head><body>
<form id="f" method="post" action="${server.appUrl}/tokens"><input name="name" value="stolen"><input name="csrf" value="guess"></form>
<script>document.getElementById('f').submit()</script></body></html>`;
    const deploy = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: attack }] } });
    await page.goto(deploy.json.site.url);
    await page.waitForURL(`${server.appUrl}/tokens`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/Request refused|This form has expired/);
    await page.goto(`${server.appUrl}/tokens`);
    expect(await page.getByRole('row', { name: /stolen/ }).count()).toBe(0);
    expect((await api(server, { path: '/v1/me', token })).json).toEqual(before);
    await context.close();
  });
});

describe('every other page, one step at a time', () => {
  // One person's browser walks through the pages no flow above shows; each test is one page, and
  // each page passes axe-core at 390 and 1280 px (inspectPage) and runs nothing it was given.
  const address = email('pages');
  let session: Awaited<ReturnType<typeof openPage>>;
  beforeAll(async () => {
    session = await openPage(browser);
  });
  afterAll(async () => {
    expect(session.errors).toEqual([]);
    await session.context.close();
  });

  it('the check-your-e-mail page', async () => {
    const { page } = session;
    await page.goto(`${server.appUrl}/login`);
    await page.getByLabel('E-mail address').fill(address);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Check your e-mail' }).count()).toBe(1);
    // A local install sends no mail: the page points to where it went.
    expect(await page.getByRole('link', { name: 'outbox' }).getAttribute('href')).toBe('/outbox');
    await inspectPage(page, 'login-check');
  });

  it('a wrong code, with its error next to the field', async () => {
    const { page } = session;
    await page.getByLabel('6-digit code').fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That code is not right');
    await inspectPage(page, 'login-code-error');
  });

  it("the e-mailed link's page", async () => {
    const { page } = session;
    await page.goto(linkIn(await mailTo(server, address), `${server.appUrl}/login/verify?token=`));
    await inspectPage(page, 'login-verify');
    await page.getByRole('button', { name: `Sign in as ${address}` }).click();
    await page.waitForLoadState('load');
  });

  it('a claim link that does not work', async () => {
    const { page } = session;
    await page.goto(`${server.appUrl}/claim/ct_not-a-real-link`);
    await expect.poll(() => page.getByRole('heading', { name: 'This claim link does not work' }).count()).toBe(1);
    await inspectPage(page, 'claim-invalid');
  });

  it('a page that does not exist', async () => {
    const { page } = session;
    await page.goto(`${server.appUrl}/no/such/page`);
    await inspectPage(page, 'not-found');
  });

  it('the outbox', async () => {
    const { page } = session;
    await page.goto(`${server.appUrl}/outbox`);
    await expect.poll(() => page.getByRole('heading', { name: 'Outbox' }).count()).toBe(1);
    await inspectPage(page, 'outbox');
  });

  it('a hostile token name, shown as text', async () => {
    const { page } = session;
    await page.goto(`${server.appUrl}/tokens`);
    await page.getByLabel('Token name').fill('<img src=x onerror=alert(1)><script>alert(2)</script>');
    await page.getByRole('button', { name: 'Create token' }).click();
    // The token's row, and the account's activity names it too: as text both times.
    const tokens = page.getByRole('region', { name: 'Your API tokens' });
    await expect.poll(() => tokens.getByRole('row', { name: /<img src=x onerror=alert\(1\)>/ }).count()).toBe(1);
  });

  it('a refused token name, with its error next to the field', async () => {
    const { page } = session;
    await page.getByLabel('Token name').fill('');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('A token needs a name');
    await inspectPage(page, 'tokens-error');
  });
});
