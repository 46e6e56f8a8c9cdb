/**
 * What an OAuth test of the MCP endpoint needs around a pactum server: an HTTPS server on a
 * loopback port that serves Client ID Metadata Documents (with a self-signed certificate the
 * server is told to trust through OAUTH_CLIENT_METADATA_CA_FILE), a redirect URI that catches the
 * browser coming back, a user with a password, and an OAuthClientProvider of the MCP SDK that
 * keeps everything in memory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import type { Db } from '../../src/db/knex.js';
import type { Role } from '../../src/domain/access/permissions.js';

export interface MetadataHost {
  url: string;
  caFile: string;
  /** The documents by path ("/client.json"); a function answers by itself (slow, oversized, redirecting). */
  documents: Map<string, object>;
  fetched: string[];
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 with a certificate made for it now. */
export async function startMetadataHost(): Promise<MetadataHost> {
  const dir = mkdtempSync(join(tmpdir(), 'pactum-cimd-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const documents: MetadataHost['documents'] = new Map();
  const fetched: string[] = [];
  const server: HttpsServer = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    fetched.push(req.url ?? '');
    const doc = documents.get(req.url ?? '');
    if (typeof doc === 'function') return (doc as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
    if (doc === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caFile: cert,
    documents,
    fetched,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback redirect URI; `next()` resolves with the query of the next request that reaches it. */
export async function startCallback(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  const waiting: ((q: URLSearchParams) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Done</title><p>You may close this window.</p>');
    waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function userWithPassword(db: Db, o: { org: string; username: string; password: string; role?: Role }) {
  const org = await insertOrg(db, { name: `${o.org} team`, slug: o.org });
  const user = await insertUser(db, { orgId: org.id, username: o.username, passwordHash: await hashPassword(o.password), role: o.role ?? 'member' });
  return { org, user };
}

/** The MCP SDK's client side of OAuth, in memory; `authorizationUrl` is where it would open the browser. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  constructor(
    readonly redirectUri: string,
    readonly clientMetadataUrl: string | undefined,
    readonly name = 'Test MCP client',
  ) {}
  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [this.redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A Client ID Metadata Document for a native client with one loopback redirect URI. */
export const clientDocument = (clientId: string, redirectUri: string, name = 'Test MCP client') => ({
  client_id: clientId,
  client_name: name,
  redirect_uris: [redirectUri],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
});
