/** The service-connection tools. Secrets go in, previews come out. */
import { testConnection } from '../../domain/connections/client.js';
import { hasCredentials } from '../../domain/connections/service-url.js';
import { ToolFailure, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

const missing = (serviceId: string) => new ToolFailure('not_found', `No ${serviceId} connection in this organization; create it with dashboard_create_service_connection`);

/** The url is stored in clear and shown to admins: a secret in it would be too. The message does not repeat it. */
function refuseCredentials(url: string | undefined) {
  if (url !== undefined && hasCredentials(url)) {
    throw new ToolFailure('invalid_arguments', 'url contains a user name or password; give the url without them and put the secret in clientSecret, which is stored sealed and never shown');
  }
}

export function connectionTools(s: Pick<McpDeps, 'config' | 'connections'>): Pick<
  ToolHandlers,
  | 'dashboard_create_service_connection'
  | 'dashboard_get_service_connection'
  | 'dashboard_list_service_connections'
  | 'dashboard_update_service_connection'
  | 'dashboard_test_service_connection'
> {
  return {
    async dashboard_create_service_connection({ serviceId, url, clientId, clientSecret }, { caller }) {
      refuseCredentials(url);
      return s.connections.upsert(caller.orgId, { serviceId, url, clientId, clientSecret });
    },

    async dashboard_get_service_connection({ serviceId }, { caller }) {
      return (await s.connections.get(caller.orgId, serviceId)) ?? Promise.reject(missing(serviceId));
    },

    async dashboard_list_service_connections(_input, { caller }) {
      return { connections: await s.connections.list(caller.orgId) };
    },

    async dashboard_update_service_connection({ serviceId, ...changes }, { caller }) {
      refuseCredentials(changes.url);
      // The secret belongs to the origin it was given for: scheme (https→http would expose it on
      // the wire), host, and port (another port can be another program). A new path keeps it.
      if (changes.url !== undefined && changes.clientSecret === undefined) {
        const stored = await s.connections.get(caller.orgId, serviceId);
        if (!stored) throw missing(serviceId);
        if (stored.hasSecret && new URL(changes.url).origin !== new URL(stored.url).origin) {
          throw new ToolFailure('invalid_arguments', `url moves the ${serviceId} connection from ${new URL(stored.url).origin} to ${new URL(changes.url).origin}; send clientSecret again with it (the stored secret is only sent to the origin it was given for)`);
        }
      }
      return (await s.connections.update(caller.orgId, serviceId, changes)) ?? Promise.reject(missing(serviceId));
    },

    async dashboard_test_service_connection({ serviceId }, { caller, progress }) {
      const credentials = await s.connections.credentials(caller.orgId, serviceId);
      if (!credentials) throw missing(serviceId);
      await progress(0, 2, `requesting a token from ${credentials.url}`);
      const result = await testConnection(credentials, s.config.serviceTimeoutMs);
      await progress(2, 2, result.ok ? 'healthy' : `failed at ${result.step}`);
      return { serviceId, ...result };
    },
  };
}
