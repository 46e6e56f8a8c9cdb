/**
 * What an OAuth test of the MCP endpoint needs around a pactum server: an HTTPS server on a
 * loopback port that serves Client ID Metadata Documents (with a self-signed certificate the
 * server is told to trust through OAUTH_CLIENT_METADATA_CA_FILE), a redirect URI that catches the
 * browser coming back, a user with a password, and an OAuthClientProvider of the MCP SDK that
 * keeps everything in memory.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
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

/** PKCE: a verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * A browser reduced to what the sign-in and consent forms need: it follows redirects on this
 * server, keeps the cookies it is given, and stops at the first redirect that leaves the server
 * (the client's redirect URI) or at a page.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ status: number; url: string; location: string | null; text: string }> {
    let target = new URL(url, this.base).href;
    let method = init.method ?? (init.form ? 'POST' : 'GET');
    let body: string | undefined = init.form ? new URLSearchParams(init.form).toString() : undefined;
    for (let hops = 0; hops < 10; hops++) {
      const headers: Record<string, string> = { accept: 'text/html' };
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      if (cookie) headers.cookie = cookie;
      const res = await fetch(target, { method, headers, body, redirect: 'manual' });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq).trim();
        const value = pair!.slice(eq + 1).trim();
        if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
      const location = res.headers.get('location');
      const text = await res.text();
      if (res.status < 300 || res.status >= 400 || !location) return { status: res.status, url: target, location: null, text };
      const next = new URL(location, target);
      if (next.origin !== new URL(this.base).origin) return { status: res.status, url: target, location: next.href, text };
      target = next.href;
      method = 'GET';
      body = undefined;
    }
    throw new Error('too many redirects');
  }
}

/** What a redirect URI receives: its query, or (a response in the fragment) its fragment. */
const answerOf = (location: string) => {
  const u = new URL(location);
  return new URLSearchParams(u.search || u.hash.slice(1));
};

/** The uid of the sign-in or consent page a FormBrowser stopped at. */
export const interactionUid = (url: string) => /\/oauth\/interaction\/([^/?]+)/.exec(url)?.[1] ?? null;

/**
 * Authorizes a client as a person would (sign in, then allow or deny), without a browser; the
 * answer the client's redirect URI receives.
 */
export async function authorizeByForms(
  base: string,
  params: Record<string, string>,
  who: { username: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
): Promise<{ answer: URLSearchParams | null; last: { status: number; url: string; text: string } }> {
  const browser = new FormBrowser(base);
  let page = await browser.request(`/oauth/authorize?${new URLSearchParams(params)}`);
  if (page.location) return { answer: answerOf(page.location), last: page };
  const uid = interactionUid(page.url);
  if (!uid || page.status !== 200) return { answer: null, last: page };
  page = await browser.request(`/oauth/interaction/${uid}/sign-in`, { form: who });
  if (page.location) return { answer: answerOf(page.location), last: page };
  const consentUid = interactionUid(page.url);
  if (!consentUid || page.status !== 200 || !page.text.includes('Allow access?')) return { answer: null, last: page };
  page = await browser.request(`/oauth/interaction/${consentUid}/consent`, { form: { decision } });
  return { answer: page.location ? answerOf(page.location) : null, last: page };
}
