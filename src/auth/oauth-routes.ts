/**
 * The authorization server's endpoints. The protocol endpoints (metadata, authorize, token,
 * revocation, registration, JWKS) are oidc-provider's, handed the request as it came; the
 * sign-in and consent pages are pactum's own. With OAUTH_ISSUER set the built-in server is off
 * and each of them answers 404.
 */
import type { Context } from 'koa';
import type { Handler } from '../http/router.js';
import { HttpError } from '../http/errors.js';
import { readJsonText, JsonBodyError } from '../http/json-body.js';
import { findUserByName } from '../db/users.js';
import { checkPassword } from './passwords.js';
import type { AuthDeps } from './services.js';
import type { UserState } from './user-state.js';
import type { OAuthServer } from './oauth-server.js';
import { accountIdOf, parseAccountId, scopesHeldBy } from './oauth-accounts.js';
import { consentPage, interactionEndedPage, interactionPagePolicy, signInPage, type ClientView } from './oauth-pages.js';

/** The authorization server, made at its first use; null when an external issuer is configured. */
export type OAuthServerRef = () => Promise<OAuthServer | null>;

export interface OAuthDeps extends Pick<AuthDeps, 'config' | 'db' | 'passwords'> {
  oauth: OAuthServerRef;
  users: UserState;
}

type OAuthOperation =
  | 'auth.oauthServerMetadata'
  | 'auth.openidConfiguration'
  | 'auth.oauthJwks'
  | 'auth.oauthAuthorize'
  | 'auth.oauthAuthorizeResume'
  | 'auth.oauthToken'
  | 'auth.oauthRevoke'
  | 'auth.oauthRegister';

const off = () => new HttpError(404, 'This server uses an external authorization server (OAUTH_ISSUER); its own is off');

/**
 * Hands the request to oidc-provider, which writes the answer. `path`: the provider's path for
 * it, where it differs from the request's (RFC 8414 metadata is the OpenID document).
 */
export function delegate(
  s: Pick<OAuthDeps, 'oauth' | 'config'>,
  opts: { path?: string; when?: (deps: OAuthDeps['config']) => boolean; limit?: (ctx: Context) => void } = {},
): Handler<OAuthOperation> {
  let callback: ((req: Context['req'], res: Context['res']) => Promise<void>) | undefined;
  return async ({ ctx, body }) => {
    const server = await s.oauth();
    if (!server || (opts.when && !opts.when(s.config))) throw server ? new HttpError(404, 'Dynamic Client Registration is off on this server (OAUTH_DCR); identify the client with a Client ID Metadata Document') : off();
    opts.limit?.(ctx);
    // The router refuses a NUL in a declared parameter; the provider reads others too (nonce, prompt).
    if (formHasNul(new URLSearchParams(ctx.querystring))) {
      const why = 'A parameter contains a NUL character (\\u0000), which none accepts';
      // The token and revocation endpoints answer in OAuth's error shape; the browser's pages in the spec's.
      if (ctx.method === 'POST') return oauthRefusal(ctx, why);
      throw new HttpError(400, why);
    }
    callback ??= server.provider.callback() as unknown as typeof callback;
    if (opts.path) ctx.req.url = `${opts.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
    // A JSON body (registration) was read and checked by the router: the provider takes it as text.
    if (body !== undefined) (ctx.req as { body?: unknown }).body = JSON.stringify(body);
    else if (ctx.is('application/x-www-form-urlencoded')) {
      // A form (token, revocation) is read here, within the provider's own size limit, so that a
      // NUL in any field is refused before the provider looks a client or a code up with it.
      let text: string;
      try {
        text = await readJsonText(ctx.req, { limit: FORM_LIMIT, maxDepth: Number.MAX_SAFE_INTEGER });
      } catch (err) {
        if (err instanceof JsonBodyError) return oauthRefusal(ctx, `The form could not be read: ${err.message}`);
        throw err;
      }
      if (formHasNul(new URLSearchParams(text))) return oauthRefusal(ctx, 'The form contains a NUL character (\\u0000), which no field accepts');
      (ctx.req as { body?: unknown }).body = text;
    }
    ctx.respond = false;
    await callback!(ctx.req, ctx.res);
  };
}

/**
 * At most `max` registrations per client address per hour (Dynamic Client Registration is open
 * to anyone: without a cap, a flood of registrations would fill the database).
 */
export function registrationLimit(max = 20): (ctx: Context) => void {
  const hour = 3_600_000;
  const seen = new Map<string, number[]>();
  return (ctx) => {
    const now = Date.now();
    const recent = (seen.get(ctx.ip) ?? []).filter((t) => now - t < hour);
    if (recent.length >= max) {
      const retry = Math.ceil((recent[0]! + hour - now) / 1000);
      throw new HttpError(429, `More than ${max} client registrations from this address in an hour; retry in ${retry} s`, { 'Retry-After': String(retry) });
    }
    recent.push(now);
    if (seen.size > 10_000) seen.clear();
    seen.set(ctx.ip, recent);
  };
}

/** oidc-provider's own limit of a form body. */
const FORM_LIMIT = 56 * 1024;

function formHasNul(form: URLSearchParams): boolean {
  for (const [name, value] of form) if (name.includes('\u0000') || value.includes('\u0000')) return true;
  return false;
}

/** An OAuth error answer (RFC 6749 §5.2) for a request refused before the provider saw it. */
function oauthRefusal(ctx: Context, description: string): void {
  ctx.status = 400;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: 'invalid_request', error_description: description };
}

/** A small form body (application/x-www-form-urlencoded), as its fields; a NUL in any is refused. */
async function readForm(ctx: Context): Promise<URLSearchParams> {
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(await readJsonText(ctx.req, { limit: 8 * 1024, maxDepth: Number.MAX_SAFE_INTEGER }));
  } catch (err) {
    if (err instanceof JsonBodyError) throw new HttpError(400, `The form could not be read: ${err.message}`);
    throw err;
  }
  if (formHasNul(form)) throw new HttpError(400, 'The form contains a NUL character (\\u0000), which no field accepts');
  return form;
}

const root = (publicUrl: string) => new URL(publicUrl).pathname.replace(/\/$/, '');

function htmlReply(ctx: Context, status: number, html: string, policy: string) {
  ctx.set('Content-Security-Policy', policy);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

type Details = Awaited<ReturnType<OAuthServer['provider']['interactionDetails']>>;

/** The interaction this browser is in, or an answered page saying it has ended. */
async function interactionOf(s: OAuthDeps, ctx: Context, uid: string): Promise<{ server: OAuthServer; details: Details } | null> {
  const server = await s.oauth();
  if (!server) throw off();
  let details: Details;
  try {
    details = await server.provider.interactionDetails(ctx.req, ctx.res);
  } catch {
    details = null as unknown as Details;
  }
  if (!details || details.uid !== uid) {
    htmlReply(ctx, 400, interactionEndedPage(root(s.config.publicUrl), 'This sign-in has expired, was already completed, or was started in another browser.'), interactionPagePolicy(s.config.publicUrl, undefined));
    return null;
  }
  return { server, details };
}

async function clientView(server: OAuthServer, details: Details): Promise<ClientView> {
  const clientId = String(details.params.client_id);
  const client = await server.provider.Client.find(clientId);
  return {
    clientId,
    name: client?.clientName ?? null,
    redirectUri: typeof details.params.redirect_uri === 'string' ? details.params.redirect_uri : '',
    fromMetadataDocument: /^https:\/\//.test(clientId),
  };
}

async function consentScopes(users: UserState, details: Details): Promise<{ granted: string[]; refused: string[] }> {
  const asked = (typeof details.params.scope === 'string' ? details.params.scope : '').split(' ').filter(Boolean);
  const held = new Set(await scopesHeldBy(users, details.session!.accountId));
  const resource = new Set(['openid', 'offline_access']);
  return {
    granted: asked.filter((s) => held.has(s) || resource.has(s)),
    refused: asked.filter((s) => !held.has(s) && !resource.has(s)),
  };
}

/** Where the browser goes once an interaction step is decided: back to the authorization endpoint. */
async function finish(server: OAuthServer, ctx: Context, result: Record<string, unknown>) {
  const to = await server.provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  ctx.set('Cache-Control', 'no-store');
  return { status: 303, headers: { Location: to } };
}

/** The page of the interaction's step: the sign-in form, or once signed in the consent page. */
async function showStep(s: OAuthDeps, ctx: Context, uid: string, server: OAuthServer, details: Details, note?: string) {
  const client = await clientView(server, details);
  const policy = interactionPagePolicy(s.config.publicUrl, client.redirectUri);
  const base = root(s.config.publicUrl);
  if (details.prompt.name === 'login' || !details.session?.accountId) return htmlReply(ctx, 200, signInPage(base, uid, client, { error: note }), policy);
  const parsed = parseAccountId(details.session.accountId);
  const user = parsed && (await s.users.get(parsed.userId));
  const org = user && (await s.users.org(user.org_id));
  if (!user || !org) return htmlReply(ctx, 400, interactionEndedPage(base, 'Your account is no longer active.'), policy);
  htmlReply(ctx, 200, consentPage(base, uid, client, { username: user.username, orgName: org.name }, await consentScopes(s.users, details), note), policy);
}

export function oauthInteraction(s: OAuthDeps): Handler<'auth.oauthInteraction'> {
  return async ({ ctx, params }) => {
    const found = await interactionOf(s, ctx, params.uid);
    if (found) await showStep(s, ctx, params.uid, found.server, found.details);
  };
}

export function oauthSignIn(s: OAuthDeps): Handler<'auth.oauthSignIn'> {
  return async ({ ctx, params }) => {
    const form = await readForm(ctx);
    const found = await interactionOf(s, ctx, params.uid);
    if (!found) return;
    const { server, details } = found;
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    const user = username ? await findUserByName(s.db, username) : undefined;
    let ok = false;
    let refusal = 'Invalid username or password.';
    let status = 200;
    try {
      // The same work, and the same answer, whether the user exists or not; throttled before scrypt.
      ok = await s.passwords.guard(username, ctx.ip, () => checkPassword(password, user?.password_hash, ctx.ip));
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 429) throw err;
      refusal = `${err.message}.`;
      status = 429;
      if (err.headers?.['Retry-After']) ctx.set('Retry-After', err.headers['Retry-After']);
    }
    if (!user || !ok || !user.active) {
      const client = await clientView(server, details);
      return htmlReply(ctx, status, signInPage(root(s.config.publicUrl), params.uid, client, { username, error: refusal }), interactionPagePolicy(s.config.publicUrl, client.redirectUri));
    }
    return finish(server, ctx, { login: { accountId: accountIdOf(user.id, Number(user.credential_version)) } });
  };
}

export function oauthConsent(s: OAuthDeps): Handler<'auth.oauthConsent'> {
  return async ({ ctx, params }) => {
    const form = await readForm(ctx);
    const found = await interactionOf(s, ctx, params.uid);
    if (!found) return;
    const { server, details } = found;
    const decision = form.get('decision');
    if (decision !== 'allow' && decision !== 'deny') return showStep(s, ctx, params.uid, server, details, 'Choose Allow or Deny.');
    if (decision === 'deny' || details.prompt.name !== 'consent' || !details.session?.accountId) {
      return finish(server, ctx, { error: 'access_denied', error_description: 'The user did not allow access' });
    }
    const { accountId } = details.session;
    const clientId = String(details.params.client_id);
    const grant = details.grantId ? await server.provider.Grant.find(details.grantId) : new server.provider.Grant({ accountId, clientId });
    if (!grant) return finish(server, ctx, { error: 'access_denied', error_description: 'The grant ended' });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    // Only what the user's role holds (the provider asks for no more once the user is known).
    const held = new Set(await scopesHeldBy(s.users, accountId));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.filter((x) => held.has(x)).join(' '));
    const grantId = await grant.save();
    return finish(server, ctx, { consent: { grantId } });
  };
}
