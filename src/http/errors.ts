/**
 * Errors in each API's own shape. The dashboard answers {error, statusCode, message, requestId}
 * as application/json; the object APIs answer {message, request_id, documentation_url?} in the
 * vendor media type the client asked for.
 */
import { STATUS_CODES } from './node-http.js';
import type { ApiName } from '../../generated/operations.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A refusal because the credential was revoked or changed, or its user deactivated (counted in the metrics). */
export class RevokedCredential extends HttpError {}

/**
 * A session cookie that names no live session: ended, signed out, revoked, or sent twice. An API
 * refuses it (401); a page, and whatever anonymous callers may use, treats it as no cookie and
 * sends `clearCookies` (Set-Cookie values that end it), so a browser holding a stale cookie still
 * reaches the sign-in form.
 */
export class StaleSessionCookie extends HttpError {
  constructor(
    message: string,
    headers: Record<string, string>,
    readonly clearCookies: readonly string[],
    /** Signed out, its user deactivated or given new credentials (the metrics count revocations). */
    readonly revoked: boolean,
  ) {
    super(401, message, headers);
  }
}

/** `docsUrl`: where the object APIs' documentation_url points (LFS_ERROR_DOCS_URL, else the server's own landing page). */
export function errorBody(api: ApiName, status: number, message: string, requestId: string, docsUrl?: string): Record<string, unknown> {
  if (api === 'dashboard') return { error: STATUS_CODES[status] ?? 'Error', statusCode: status, message, requestId };
  return { message, ...(docsUrl ? { documentation_url: docsUrl } : {}), request_id: requestId };
}

/** Which API a path belongs to when no operation matched it. */
export const apiOfPath = (path: string): ApiName => (/\.git\/info\/lfs(\/|$)/.test(path) ? 'batch' : 'dashboard');
