/**
 * Webhook signatures, as Stripe signs its webhooks: the header
 *
 *   Pactum-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 *
 * The time is signed with the body, so a receiver that refuses a t older than a few minutes
 * refuses replays too; comparing in constant time keeps the check from leaking the signature.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Pactum-Signature';
/** A delivery's id (the body's `id`): the same on every attempt of one delivery. */
export const DELIVERY_HEADER = 'Pactum-Delivery';
export const EVENT_HEADER = 'Pactum-Event';

/** A new signing secret: whsec_ and 32 random bytes in hex. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('hex')}`;

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** The header's value for `body` signed at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, body)}`;
}

/**
 * What a receiver does: the header parses, its time is within `toleranceSeconds` of now, and one
 * of its v1 signatures is the body's under the secret.
 */
export function verifySignature(secret: string, header: string, body: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const parts = header.split(',').map((p) => p.trim().split('=') as [string, string?]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureOf(secret, t, body), 'hex');
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
