import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A value shown once on the page a POST redirects to (a new API token), carried in a short-lived
 * cookie encrypted with a key from the session's secret: no server state, and useless to anyone
 * but that session.
 */

function keyOf(sessionSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(sessionSecret), Buffer.alloc(0), Buffer.from('plinth flash'), 32));
}

export function sealFlash(sessionSecret: string, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionSecret), iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

export function openFlash(sessionSecret: string, sealed: string | undefined): string | undefined {
  const parts = (sealed ?? '').split('.').map((part) => Buffer.from(part, 'base64url'));
  if (parts.length !== 3) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionSecret), parts[0]!);
    decipher.setAuthTag(parts[2]!);
    return Buffer.concat([decipher.update(parts[1]!), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
