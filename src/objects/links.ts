/**
 * Hypermedia: the hrefs of links and actions, always for the current public location, each with
 * its own short-lived transfer token in `header`. The tokens of one factory (one batch) share
 * their claims and one signature (transfer-tokens.ts, format 3).
 */
import type { components as B } from '../../generated/types/batch.js';
import type { Identity } from '../domain/access/identity.js';
import type { RepoRow } from '../db/repos.js';
import type { TransferTokens } from './transfer-tokens.js';

export type Action = B['schemas']['link'];

export const repoBase = (publicUrl: string, repo: Pick<RepoRow, 'org_slug' | 'name'>) =>
  `${publicUrl}/${encodeURIComponent(repo.org_slug)}/${encodeURIComponent(repo.name)}.git/info/lfs`;

export interface ActionFactory {
  href(path: string): string;
  /** The header that grants `op` on one object of this size: a signed transfer token. */
  header(oid: string, size: number, op: 'upload' | 'download'): Record<string, string>;
  action(path: string, header: Record<string, string>): Action;
  /** An action elsewhere (a presigned storage URL): its href is its authorization, so no header. */
  direct(href: string): Action;
  /** The Authorization value that grants `op` on one object of this size (what header() holds). */
  authorization(oid: string, size: number, op: 'upload' | 'download'): string;
  /**
   * JSON.stringify(action(path, { Authorization: authorization })), written from a template:
   * `path` and `authorization` must need no JSON escaping (a path of hex oids, a token of
   * base64url, hex, digits and dots), which holds for every action a batch gives.
   */
  actionJson(path: string, authorization: string): string;
  /** JSON.stringify(direct(href)). */
  directJson(href: string): string;
}

export function actionFactory(opts: { publicUrl: string; ttlSeconds: number; tokens: TransferTokens; repo: RepoRow; identity: Identity | null }): ActionFactory {
  const base = repoBase(opts.publicUrl, opts.repo);
  const exp = Math.floor(Date.now() / 1000) + opts.ttlSeconds;
  const expiresAt = new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const who = { subject: opts.identity?.subject ?? 'anonymous', username: opts.identity?.username ?? null, orgId: opts.identity?.orgId ?? opts.repo.org_id, credentialVersion: opts.identity?.credentialVersion ?? null };
  // Signed on first use: a batch needs one operation's tokens only.
  const signers: Partial<Record<'upload' | 'download', (oid: string, size: number) => string>> = {};
  const signer = (op: 'upload' | 'download') => (signers[op] ??= opts.tokens.batchSigner({ repoId: opts.repo.id, op, ...who, exp }));
  // The fixed parts of an action as JSON (the base is escaped once: it holds the public URL).
  const hrefJson = `{"href":"${JSON.stringify(base).slice(1, -1)}`;
  const expiresJson = `"expires_in":${opts.ttlSeconds},"expires_at":"${expiresAt}"}`;
  return {
    href: (path) => `${base}${path}`,
    header: (oid, size, op) => ({ Authorization: `Bearer ${signer(op)(oid, size)}` }),
    authorization: (oid, size, op) => `Bearer ${signer(op)(oid, size)}`,
    actionJson: (path, authorization) => `${hrefJson}${path}","header":{"Authorization":"${authorization}"},${expiresJson}`,
    directJson: (href) => `{"href":${JSON.stringify(href)},"header":{},${expiresJson}`,
    action: (path, header) => ({ href: `${base}${path}`, header, expires_in: opts.ttlSeconds, expires_at: expiresAt }),
    direct: (href) => ({ href, header: {}, expires_in: opts.ttlSeconds, expires_at: expiresAt }),
  };
}
