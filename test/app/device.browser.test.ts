import { afterAll, beforeAll, describe, it } from 'vitest';
import { useBrowser } from '../helpers/fixtures.js';
import { inspectPage, openPage, signIn, startAppServer, type AppServer } from './browser.js';
import { signInOverHttp } from './http-client.js';
import { pollDevice, startDevice, whoAmI, type DeviceStart, type OAuthAnswer } from './device-helpers.js';

/**
 * `plinth login` end to end, as RFC 8628 has it: a device asks for a code and polls the token
 * endpoint at the interval it was given while a person, in Chromium, signs in and approves or
 * denies; the approved device's token then works on the API.
 */

let server: AppServer;
let counter = 0;
const email = (who: string): string => `${who}-${Date.now().toString(36)}${++counter}@example.com`;
const browser = useBrowser();

/**
 * The device polls at the interval the server announces, which this server sets to a second
 * (PLINTH_DEVICE_POLL_INTERVAL_S) so that the test waits on the person, not on the clock.
 */
const POLL_INTERVAL_S = 1;

beforeAll(async () => {
  server = await startAppServer({ PLINTH_DEVICE_POLL_INTERVAL_S: String(POLL_INTERVAL_S) });
});

afterAll(async () => {
  await server?.close();
});

/** Polls as a well-behaved device does until the answer is no longer "pending"; returns it. */
async function pollUntilDecided(start: DeviceStart, deadlineMs = 45_000): Promise<OAuthAnswer> {
  let interval = start.interval;
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    const answer = await pollDevice(server, start.device_code);
    if (answer.body.error === 'slow_down') interval += 5;
    else if (answer.body.error !== 'authorization_pending') return answer;
  }
  throw new Error('the device was never approved nor denied');
}

describe.concurrent('signing in a device', () => {
  it('a person follows the address with the code, signs in, approves, and the device gets a working token', { timeout: 90_000 }, async ({ expect }) => {
    const start = await startDevice(server, { device_name: 'my laptop' });
    expect(start.interval).toBe(POLL_INTERVAL_S);
    const polled = pollUntilDecided(start);
    const address = email('device');
    const { context, page, errors } = await openPage(browser);

    await page.goto(start.verification_uri_complete);
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, server, address);
    // Back on the device page, with the code: the device and what it gets.
    await expect.poll(() => page.getByRole('heading', { name: 'Approve “my laptop”?' }).count()).toBe(1);
    expect(await page.getByText(start.user_code).count()).toBe(1);
    expect(await page.getByText('Plinth CLI').count()).toBeGreaterThan(0);
    await inspectPage(page, 'device-approve');
    await page.getByRole('button', { name: 'Approve my laptop' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved: “my laptop”');
    await inspectPage(page, 'device-approved');

    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('Bearer');
    expect(await whoAmI(server, answer.body.access_token!)).toEqual({ status: 200, email: address });
    // The token is the account's, named after the device, and revocable on the tokens page.
    await page.goto(`${server.appUrl}/tokens`);
    expect(await page.getByRole('rowheader', { name: 'my laptop' }).count()).toBe(1);
    await page.getByRole('link', { name: 'Revoke my laptop…' }).click();
    await page.getByRole('button', { name: 'Revoke my laptop' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The token was revoked');
    expect((await whoAmI(server, answer.body.access_token!)).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a signed-in person types the code and denies, and the device is told so', { timeout: 60_000 }, async ({ expect }) => {
    const start = await startDevice(server, { device_name: 'unknown box' });
    const polled = pollUntilDecided(start);
    const { context, page, errors } = await openPage(browser);
    await signInOverHttp(context, server, email('denier'));
    await page.goto(start.verification_uri);
    await inspectPage(page, 'device-code');
    await page.getByLabel('Code shown by the device').fill(start.user_code.toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Approve “unknown box”?' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Denied');

    const answer = await polled;
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('access_denied');
    expect(errors).toEqual([]);
    await context.close();
  });
});
