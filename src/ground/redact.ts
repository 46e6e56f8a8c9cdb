/**
 * Secrets taken out of what is written down: members whose names say they hold one, and the
 * credentials of URLs, replaced in a copy before it goes to a log line or the audit trail.
 */

const SECRET_KEYS = /^(password|clientSecret|secret|token|authorization|cookie|passwordHash)$/i;

/**
 * The user name and password of a URL ("https://user:pass@host"), wherever one appears in a text.
 * Any run of slashes or backslashes after the scheme, tabs or newlines inside, and up to the last
 * "@" before the host, as the WHATWG parser reads them.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:[\\/]+)(?:[^\\/?#@ "'<>]*@)+/gi;

/** `text` with the credentials of every URL in it replaced. */
export const redactUrlCredentials = (text: string) => text.replace(URL_USERINFO, '$1[redacted]@');

/** A copy of a JSON value with secret-named members and URL credentials replaced, for logs and the audit trail. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  // A hostile argument may nest thousands of levels: the copy stops well before the stack does.
  if (depth > 32 && value && typeof value === 'object') return '[nested too deep]';
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_KEYS.test(k) ? '[redacted]' : redactSecrets(v, depth + 1)]),
    );
  }
  return value;
}
