import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

/**
 * The account token a person lets the publishing agent keep (claim page opt-in) waits for the
 * agent's next claim poll, encrypted so that only the holder of the site token can open it.
 * The site token itself is stored only as a hash, so the anonymous deploy also stores an X25519
 * public key derived from it; the claim encrypts to that key (ephemeral X25519, HKDF-SHA256,
 * AES-256-GCM), and the poll, which presents the site token, derives the private key again.
 * Nothing stored is usable without the site token (SPEC 5 rule 1 holds in substance).
 */

const INFO = Buffer.from('plinth claim account token');
// PKCS#8 wrapping of a raw X25519 private key (RFC 8410).
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

function privateKeyOf(siteToken: string): KeyObject {
  const seed = Buffer.from(hkdfSync('sha256', Buffer.from(siteToken, 'utf8'), Buffer.alloc(0), INFO, 32));
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

function rawPublicKey(key: KeyObject): string {
  return (key.export({ format: 'jwk' }) as { x: string }).x;
}

function publicKeyFromRaw(raw: string): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: raw }, format: 'jwk' });
}

function aesKey(shared: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, Buffer.alloc(0), INFO, 32));
}

/** The public key (base64url) to store for a new site token. */
export function claimKeyFor(siteToken: string): string {
  return rawPublicKey(createPublicKey(privateKeyOf(siteToken)));
}

/** `ephemeralKey.iv.ciphertext.tag`, base64url. */
export function sealAccountToken(token: string, claimKey: string): string {
  const ephemeral = generateKeyPairSync('x25519');
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: publicKeyFromRaw(claimKey) });
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', aesKey(shared), iv);
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return [rawPublicKey(ephemeral.publicKey), iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** The token, or undefined when `sealed` was not made for this site token. */
export function unsealAccountToken(sealed: string, siteToken: string): string | undefined {
  const [ephemeral, iv, body, tag] = sealed.split('.');
  if (!ephemeral || !iv || !body || !tag) return undefined;
  try {
    const shared = diffieHellman({ privateKey: privateKeyOf(siteToken), publicKey: publicKeyFromRaw(ephemeral) });
    const decipher = createDecipheriv('aes-256-gcm', aesKey(shared), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
