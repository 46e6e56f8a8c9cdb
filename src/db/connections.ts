/** Service connections as stored: the secret sealed, the preview beside it. */
import type { components } from '../../generated/types/dashboard.js';
import type { SecretBox } from '../ground/secret-box.js';
import { secretPreview } from '../ground/secret-box.js';
import type { AddressPolicy } from '../domain/scan/address-policy.js';
import { withoutCredentials } from '../domain/connections/service-url.js';
import type { Db } from './knex.js';

export type ServiceConnection = components['schemas']['service-connection'];
export type ServiceId = components['schemas']['service-id'];

interface Row {
  org_id: string;
  service_id: ServiceId;
  url: string;
  client_id: string;
  secret_ciphertext: string | null;
  secret_preview: string | null;
  created_at: string;
  updated_at: string;
}

// A url stored with a user name or password (before they were refused) is shown, and called, without them.
const toView = (r: Row): ServiceConnection => ({
  serviceId: r.service_id,
  url: withoutCredentials(r.url),
  clientId: r.client_id,
  hasSecret: r.secret_ciphertext !== null,
  secretPreview: r.secret_preview,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

// The ciphertext is bound to its org and service: moved to another row, it does not decrypt.
const aad = (orgId: string, serviceId: string) => `service-connection:${orgId}:${serviceId}`;

/**
 * `policy`: where the credentials may be sent (see OUTBOUND_ALLOW_PRIVATE_NETWORKS);
 * `traceContext`: how the caller's trace goes along with each call (the tracer's).
 */
export function connectionStore(db: Db, box: SecretBox, policy: AddressPolicy = { allowPrivateNetworks: false }, traceContext?: (headers: Headers) => void) {
  const find = (orgId: string, serviceId: ServiceId) => db<Row>('service_connections').where({ org_id: orgId, service_id: serviceId }).first();
  return {
    async get(orgId: string, serviceId: ServiceId) {
      const row = await find(orgId, serviceId);
      return row ? toView(row) : null;
    },
    async list(orgId: string) {
      return (await db<Row>('service_connections').where({ org_id: orgId }).orderBy('service_id')).map(toView);
    },
    /** One connection per service: a second create replaces the first. */
    async upsert(orgId: string, c: { serviceId: ServiceId; url: string; clientId: string; clientSecret: string }) {
      const now = new Date().toISOString();
      const values = {
        url: c.url,
        client_id: c.clientId,
        secret_ciphertext: box.seal(c.clientSecret, aad(orgId, c.serviceId)),
        secret_preview: secretPreview(c.clientSecret),
        updated_at: now,
      };
      await db('service_connections')
        .insert({ org_id: orgId, service_id: c.serviceId, created_at: now, ...values })
        .onConflict(['org_id', 'service_id'])
        .merge(values);
      return toView((await find(orgId, c.serviceId))!);
    },
    async update(orgId: string, serviceId: ServiceId, c: { url?: string; clientId?: string; clientSecret?: string }) {
      const changes: Partial<Row> = { updated_at: new Date().toISOString() };
      if (c.url !== undefined) changes.url = c.url;
      if (c.clientId !== undefined) changes.client_id = c.clientId;
      if (c.clientSecret !== undefined) {
        changes.secret_ciphertext = box.seal(c.clientSecret, aad(orgId, serviceId));
        changes.secret_preview = secretPreview(c.clientSecret);
      }
      const n = await db('service_connections').where({ org_id: orgId, service_id: serviceId }).update(changes);
      return n ? toView((await find(orgId, serviceId))!) : null;
    },
    /** The connection with its secret in clear, for the code that calls the service. Never returned to callers. */
    async credentials(orgId: string, serviceId: ServiceId) {
      const row = await find(orgId, serviceId);
      if (!row) return null;
      return {
        url: withoutCredentials(row.url),
        clientId: row.client_id,
        clientSecret: row.secret_ciphertext ? box.open(row.secret_ciphertext, aad(orgId, serviceId)) : '',
        policy,
        ...(traceContext ? { traceContext } : {}),
      };
    },
  };
}

export type ConnectionStore = ReturnType<typeof connectionStore>;
