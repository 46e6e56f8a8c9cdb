/**
 * Encryption of stored secrets (service-connection client secrets): AES-256-GCM with a random
 * 96-bit IV, the record's identity as associated data (a ciphertext copied to another row does
 * not decrypt), and a version prefix so the scheme can change later.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import { loadOrCreateKey, parseKey } from './keys.js';

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export function createSecretBox(config: Config): SecretBox {
  const key = config.secretsKey ? parseKey(config.secretsKey, 'SECRETS_KEY') : loadOrCreateKey(config.dataDir, 'secrets-aes256', 32);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64')}`;
    },
    open(sealed, context) {
      if (!sealed.startsWith('v1:')) throw new Error('unknown secret format');
      const raw = Buffer.from(sealed.slice(3), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * "xxxx" and the last four characters. Null for secrets shorter than 8, where four characters
 * would give away half of it or more.
 */
export const secretPreview = (secret: string): string | null => (secret.length >= 8 ? `xxxx${secret.slice(-4)}` : null);
