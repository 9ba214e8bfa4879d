import { request, type TestResponse } from '../helpers/http.js';
import type { AppServer } from './browser.js';

/** What a device (a CLI, an agent) does in RFC 8628, over HTTP to the app host, without cookies. */

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface OAuthAnswer {
  status: number;
  headers: TestResponse['headers'];
  body: Record<string, string>;
}

/** A form POST to the app host as a program sends it. */
export async function postForm(server: AppServer, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<OAuthAnswer> {
  const res = await request({
    port: server.port,
    host: new URL(server.appUrl).host,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  let body: Record<string, string> = {};
  if (res.text !== '') body = JSON.parse(res.text) as Record<string, string>;
  return { status: res.status, headers: res.headers, body };
}

/** `POST /oauth/device_authorization`; the answer as it is. */
export function askDevice(server: AppServer, fields: Record<string, string> = {}): Promise<OAuthAnswer> {
  return postForm(server, '/oauth/device_authorization', { client_id: 'plinth-cli', ...fields });
}

/** A device sign-in that must start. */
export async function startDevice(server: AppServer, fields: Record<string, string> = {}): Promise<DeviceStart> {
  const answer = await askDevice(server, fields);
  if (answer.status !== 200) throw new Error(`device_authorization refused: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as unknown as DeviceStart;
}

/** One poll of the token endpoint. */
export function pollDevice(server: AppServer, deviceCode: string, clientId = 'plinth-cli'): Promise<OAuthAnswer> {
  return postForm(server, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });
}

/** `GET /v1/me` with a token: its status and e-mail. */
export async function whoAmI(server: AppServer, token: string): Promise<{ status: number; email?: string }> {
  const res = await request({ port: server.port, host: new URL(server.apiUrl).host, path: '/v1/me', headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, email: res.status === 200 ? (JSON.parse(res.text) as { email: string }).email : undefined };
}
