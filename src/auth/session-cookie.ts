/**
 * The session cookie's name and how a request's cookies are read. Over HTTPS the cookie is
 * `__Host-session`: browsers accept that prefix only with Secure, Path=/ and no Domain, so a
 * sibling or parent domain cannot set or shadow it. Over plain HTTP, where browsers refuse the
 * prefix, it is `session`. A request that carries more than one session cookie, under either name,
 * is ambiguous (one may have been planted by another site of the domain): it is refused, never
 * resolved by picking one.
 */

export const HOST_SESSION_COOKIE = '__Host-session';
export const PLAIN_SESSION_COOKIE = 'session';

/** The name this server sets and reads, from its PUBLIC_URL's scheme. */
export const sessionCookieName = (publicUrl: string) => (publicUrl.startsWith('https:') ? HOST_SESSION_COOKIE : PLAIN_SESSION_COOKIE);

function cookie(name: string, secure: boolean, value: string, maxAge: number): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

/**
 * The Set-Cookie values of a session cookie with `value` (empty and 0: the cookie's end), and over
 * HTTPS the end of a plain `session` cookie of this host (set before the `__Host-` name was used):
 * left in place, it would make every later request carry two session cookies, which are refused.
 */
export function sessionSetCookies(publicUrl: string, value: string, maxAge: number): string[] {
  const name = sessionCookieName(publicUrl);
  if (name === PLAIN_SESSION_COOKIE) return [cookie(name, false, value, maxAge)];
  return [cookie(name, true, value, maxAge), cookie(PLAIN_SESSION_COOKIE, true, '', 0)];
}

/** Every value sent under either session cookie name, in the order of the Cookie header. */
export function sessionCookieValues(cookieHeader: string | undefined): { name: string; value: string }[] {
  const found: { name: string; value: string }[] = [];
  for (const pair of (cookieHeader ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (name === HOST_SESSION_COOKIE || name === PLAIN_SESSION_COOKIE) found.push({ name, value: pair.slice(eq + 1).trim() });
  }
  return found;
}

export type SessionCookie = { kind: 'none' } | { kind: 'one'; token: string } | { kind: 'ambiguous' };

/**
 * The session token of a request: none, one under this server's name, or ambiguous. A lone cookie
 * under the other name is not this server's (a cookie of another program on the same host) and
 * is ignored; an empty value counts as none.
 */
export function readSessionCookie(cookieHeader: string | undefined, name: string): SessionCookie {
  const sent = sessionCookieValues(cookieHeader).filter((c) => c.value !== '');
  if (sent.length > 1) return { kind: 'ambiguous' };
  const own = sent.find((c) => c.name === name);
  return own ? { kind: 'one', token: own.value } : { kind: 'none' };
}
