import type { Permission, Role } from './permissions.js';

/** The authenticated caller, as every handler sees it. */
export interface Identity {
  /** How it authenticated. */
  scheme: 'bearerAuth' | 'sessionCookie' | 'basicAuth' | 'transferToken';
  /** A user id, or the `sub` of a token that names no user (a service principal). */
  subject: string;
  /** Set when the subject is a dashboard user. */
  username: string | null;
  orgId: string;
  role: Role | null;
  permissions: ReadonlySet<Permission>;
  /**
   * For a user's token whose scope narrowed what the user's role holds: what the role holds now.
   * A permission here and not in `permissions` is a step-up away (a token with a wider scope),
   * not a refusal of the user.
   */
  heldByRole?: ReadonlySet<Permission>;
  /** For a local user: its credential version when it authenticated (transfer tokens carry it). */
  credentialVersion?: number;
  /** For the session cookie: the session's id (logout revokes it). */
  sessionId?: string;
  /** For a transfer token: the one operation on one object it allows. */
  transfer?: TransferGrant;
}

export interface TransferGrant {
  repoId: string;
  oid: string;
  size: number;
  op: 'upload' | 'download';
}

export const isSystemAdmin = (id: Identity) => id.permissions.has('admin.system');
