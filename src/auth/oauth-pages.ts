/**
 * The sign-in and consent pages of the authorization server: plain HTML forms (no script), the
 * site's stylesheet, every control labelled and reachable by keyboard in reading order, errors
 * announced (role="alert") and tied to their fields. The consent page names the application as
 * its metadata describes it (unverified), where it sends the user back, the permissions and the
 * organization.
 */
import { escapeHtml } from '../http/notice-page.js';
import { contentSecurityPolicy } from '../http/security-headers.js';

export const SCOPE_TEXT: Record<string, string> = {
  'admin.system': 'Administer the whole server, every organization',
  'admin.org': 'Administer your organization: its users, connections and settings',
  'admin.users': 'Manage the users of your organization',
  'reports.view': 'Read accessibility scans and reports',
  'scans.create': 'Start accessibility scans',
  'branding.view': 'Read brand guidelines and scores',
  'compliance.view': 'Read regulations and compliance status',
  'issues.fix': 'Draft fixes and open pull requests',
  openid: 'Know who you are (your user id)',
  offline_access: 'Stay connected while you are away (a refresh token)',
};

/**
 * The page's policy: pactum's, with its forms allowed to post to this server and to be followed
 * to the application's redirect URI (browsers check form-action along the redirects).
 */
export function interactionPagePolicy(publicUrl: string, redirectUri: string | undefined): string {
  // A page without a form (an ended sign-in) keeps the policy of every page.
  if (redirectUri === undefined) return contentSecurityPolicy(publicUrl);
  const origins = ["'self'"];
  const target = redirectUri ? URL.parse(redirectUri) : null;
  if (target && /^https?:$/.test(target.protocol)) origins.push(target.origin);
  return contentSecurityPolicy(publicUrl).replace("form-action 'none'", `form-action ${origins.join(' ')}`);
}

function page(root: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · pactum</title>
<link rel="stylesheet" href="${root}/docs/assets/home.css">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export interface ClientView {
  clientId: string;
  name: string | null;
  redirectUri: string;
  /** True for a Client ID Metadata Document: what it says about itself is not verified. */
  fromMetadataDocument: boolean;
}

function clientLine(c: ClientView): string {
  const host = URL.parse(c.redirectUri)?.host ?? c.redirectUri;
  const name = c.name ? `<strong>${escapeHtml(c.name)}</strong>` : 'An application';
  const unverified = c.fromMetadataDocument ? ' (the name is the application’s own claim; pactum has not verified it)' : '';
  const loopback = /^(127\.|\[::1\]|localhost)/.test(host) ? ' That is a program on your own computer.' : '';
  return `<p>${name}${unverified} asks to use pactum for you. Its identifier is <code>${escapeHtml(c.clientId)}</code>, and it will receive the answer at <strong>${escapeHtml(host)}</strong>.${loopback}</p>`;
}

export function signInPage(root: string, uid: string, client: ClientView, opts: { username?: string; error?: string } = {}): string {
  const error = opts.error ? `<p id="sign-in-error" role="alert"><strong>${escapeHtml(opts.error)}</strong></p>\n` : '';
  const described = opts.error ? ' aria-describedby="sign-in-error" aria-invalid="true"' : '';
  return page(
    root,
    'Sign in to pactum',
    `${clientLine(client)}
${error}<form method="post" action="${root}/oauth/interaction/${escapeHtml(uid)}/sign-in">
<p><label for="username">Username</label><br>
<input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escapeHtml(opts.username ?? '')}"${described}></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}></p>
<p><button type="submit">Sign in</button></p>
</form>
<form method="post" action="${root}/oauth/interaction/${escapeHtml(uid)}/consent">
<p><button type="submit" name="decision" value="deny">Cancel and return to the application</button></p>
</form>`,
  );
}

export function consentPage(root: string, uid: string, client: ClientView, who: { username: string; orgName: string }, scopes: { granted: string[]; refused: string[] }, note?: string): string {
  const item = (s: string) => `<li><code>${escapeHtml(s)}</code>: ${escapeHtml(SCOPE_TEXT[s] ?? s)}</li>`;
  const refused = scopes.refused.length
    ? `<p>It also asked for these, which your role does not hold, so they are not given:</p>\n<ul>\n${scopes.refused.map(item).join('\n')}\n</ul>\n`
    : '';
  const granted = scopes.granted.length
    ? `<ul>\n${scopes.granted.map(item).join('\n')}\n</ul>\n`
    : '<p>No permission: it could only see that you signed in.</p>\n';
  return page(
    root,
    'Allow access?',
    `${clientLine(client)}
<p>You are signed in as <strong>${escapeHtml(who.username)}</strong> of the organization <strong>${escapeHtml(who.orgName)}</strong>. If you allow it, the application may, in that organization and never beyond what your role allows at the time:</p>
${granted}${refused}<p>You can revoke this access at any time (<code>pactum oauth grants revoke</code>, or the MCP tool <code>dashboard_revoke_oauth_grant</code>).</p>
${note ? `<p role="alert"><strong>${escapeHtml(note)}</strong></p>\n` : ''}<form method="post" action="${root}/oauth/interaction/${escapeHtml(uid)}/consent">
<p><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
  );
}

export function interactionEndedPage(root: string, message: string): string {
  return page(root, 'This sign-in cannot go on', `<p role="alert">${escapeHtml(message)}</p>\n<p>Go back to the application and connect again.</p>`);
}
