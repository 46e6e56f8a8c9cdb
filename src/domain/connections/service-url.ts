/**
 * A service connection's URL never carries credentials: it is stored in clear, shown to org admins
 * and audited, and fetch refuses to send a request to a URL with them anyway. The secret has its
 * own sealed field. Read as the WHATWG parser (which fetch uses) reads it.
 */
import { redactUrlCredentials } from '../../ground/redact.js';

/** Whether `url` has a user name or password; text that is no URL has none. */
export function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/** `url` without its user name and password (for a URL stored before they were refused). */
export function withoutCredentials(url: string): string {
  if (!hasCredentials(url)) return redactUrlCredentials(url);
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}
