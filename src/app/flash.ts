import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * What one page shows once after a POST redirects to it: a notice, or a new API token. It is
 * carried in a short-lived cookie encrypted with a key from the session's secret (or, signed
 * out, the server's form key): no server state, nothing any other browser can read or forge,
 * and never in the URL, where anyone could write a link that makes Plinth say their words.
 */
export interface Flash {
  notice?: string;
  /** A new API token, shown once. */
  token?: string;
  /** What a drop on the app published, for the result page. */
  deploy?: DeployFlash;
}

/** The result page's facts of one deploy; kept small, since a cookie holds at most 4 KB. */
export interface DeployFlash {
  name: string;
  url: string;
  number: number;
  revision: string;
  files: number;
  bytes: number;
  /** True when the drop made a new site; false for a new revision of an existing one. */
  created: boolean;
  /** Signed out only: the claim link and when the site goes unless claimed. */
  claimUrl?: string;
  expiresAt?: string;
  /** The first few paths left out, and how many more there were. */
  skipped: string[];
  skippedMore: number;
}

/** A flash outlives the redirect that carries it by this much, at most. */
export const FLASH_MAX_AGE_SECONDS = 300;

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), Buffer.from('plinth flash'), 32));
}

export function sealFlash(secret: string, flash: Flash): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

export function openFlash(secret: string, sealed: string | undefined): Flash | undefined {
  const parts = (sealed ?? '').split('.').map((part) => Buffer.from(part, 'base64url'));
  if (parts.length !== 3) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), parts[0]!);
    decipher.setAuthTag(parts[2]!);
    const value: unknown = JSON.parse(Buffer.concat([decipher.update(parts[1]!), decipher.final()]).toString('utf8'));
    if (value === null || typeof value !== 'object') return undefined;
    const { notice, token, deploy } = value as Record<string, unknown>;
    return {
      ...(typeof notice === 'string' ? { notice } : {}),
      ...(typeof token === 'string' ? { token } : {}),
      ...(isDeployFlash(deploy) ? { deploy } : {}),
    };
  } catch {
    return undefined;
  }
}

function isDeployFlash(value: unknown): value is DeployFlash {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.name === 'string' &&
    typeof v.url === 'string' &&
    typeof v.number === 'number' &&
    typeof v.revision === 'string' &&
    typeof v.files === 'number' &&
    typeof v.bytes === 'number' &&
    typeof v.created === 'boolean' &&
    Array.isArray(v.skipped) &&
    v.skipped.every((path) => typeof path === 'string') &&
    typeof v.skippedMore === 'number'
  );
}
