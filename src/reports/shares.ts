/**
 * Links to one report page for people without an account (dashboard_share_report): signed,
 * expiring, revocable.
 *
 * The URL carries `<shareId>.<exp>.<tag>`: the link's row id, its expiry (seconds since the
 * epoch) and HMAC-SHA256(share key, DOMAIN + shareId + "." + exp), base64url. The signature lets
 * a made-up or altered link be refused without reading the database, and the expiry is checked
 * from the URL alone; the row says which scan the link shows and whether it was revoked, so that
 * revoking takes effect at the next request, on every instance. The share key is derived from
 * the transfer-token key (TRANSFER_TOKEN_SECRET, or the key in DATA_DIR/keys), which instances
 * already share; the derivation and DOMAIN keep its tags apart from every transfer token's.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Config } from '../ground/config.js';
import { loadOrCreateKey, parseKey } from '../ground/keys.js';
import type { Db } from '../db/knex.js';
import { findScan, type ScanRow } from '../db/scans.js';
import { newId } from '../ground/ids.js';

export interface ShareRow {
  id: string;
  scan_id: string;
  org_id: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

const DOMAIN = 'pactum report share v1\0';
const TOKEN = /^(shr_[0-9a-z]{26})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

export interface ShareLinks {
  /** The token of a link: what follows /shared/ in its URL. */
  token(shareId: string, expiresAt: Date): string;
  /** The link a token names, when its signature holds (whatever its expiry), else null. */
  verify(token: string): { shareId: string; expiresAt: Date } | null;
}

export function createShareLinks(config: Pick<Config, 'dataDir' | 'lfs'>): ShareLinks {
  const raw = config.lfs.transferTokenSecret ? parseKey(config.lfs.transferTokenSecret, 'TRANSFER_TOKEN_SECRET') : loadOrCreateKey(config.dataDir, 'transfer-hmac', 32);
  const key: KeyObject = createSecretKey(createHmac('sha256', raw).update('pactum report share key v1').digest());
  const tag = (shareId: string, exp: number) => createHmac('sha256', key).update(`${DOMAIN}${shareId}.${exp}`).digest('base64url');
  return {
    token(shareId, expiresAt) {
      const exp = Math.floor(expiresAt.getTime() / 1000);
      return `${shareId}.${exp}.${tag(shareId, exp)}`;
    },
    verify(token) {
      const m = TOKEN.exec(token);
      if (!m) return null;
      const [, shareId, exp] = m as unknown as [string, string, string, string];
      const given = Buffer.from(m[3]!, 'base64url');
      const wanted = Buffer.from(tag(shareId, Number(exp)), 'base64url');
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return null;
      return { shareId, expiresAt: new Date(Number(exp) * 1000) };
    },
  };
}

/** Live links of a scan: not revoked, not expired at `now`. */
export async function liveShareCount(db: Db, scanId: string, now: Date): Promise<number> {
  const row = await db('report_shares').where({ scan_id: scanId }).whereNull('revoked_at').where('expires_at', '>', now.toISOString()).count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * A new link's row. The scan's links that no longer work (expired or revoked) are deleted first:
 * their URLs are refused without them (an expired one by its own expiry, a revoked one by its
 * missing row), and the rows a scan keeps stay bounded by REPORT_SHARES_PER_SCAN.
 */
export async function insertShare(db: Db, share: Omit<ShareRow, 'id' | 'revoked_at'>): Promise<ShareRow> {
  const row: ShareRow = { id: newId('shr'), revoked_at: null, ...share };
  await db('report_shares').where({ scan_id: share.scan_id }).andWhere((q) => void q.whereNotNull('revoked_at').orWhere('expires_at', '<=', share.created_at)).delete();
  await db('report_shares').insert(row);
  return row;
}

/** Revokes one live link of the scan, or all of them: how many were revoked. */
export async function revokeShares(db: Db, scanId: string, shareId: string | undefined, now: Date): Promise<number> {
  const q = db('report_shares').where({ scan_id: scanId }).whereNull('revoked_at').where('expires_at', '>', now.toISOString());
  if (shareId) q.where({ id: shareId });
  return q.update({ revoked_at: now.toISOString() });
}

export type OpenedShare =
  | { ok: true; share: ShareRow; scan: ScanRow }
  | { ok: false; status: 404 | 410; why: string };

const readable = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** What a link shows, or why it is refused: 404 for a signature that does not hold, 410 for a link that no longer works. */
export async function openShare(db: Db, links: ShareLinks, token: string, now: Date): Promise<OpenedShare> {
  const link = links.verify(token);
  if (!link) return { ok: false, status: 404, why: 'This link to a report is not one this server made.' };
  if (link.expiresAt <= now) return { ok: false, status: 410, why: `This link to a report expired on ${readable(link.expiresAt)}.` };
  const share = await db<ShareRow>('report_shares').where({ id: link.shareId }).first();
  if (!share || share.revoked_at) return { ok: false, status: 410, why: 'This link to a report was revoked.' };
  const scan = await findScan(db, share.scan_id);
  if (!scan) return { ok: false, status: 410, why: 'The report this link showed is no longer kept.' };
  return { ok: true, share, scan };
}

/** One ShareLinks per configuration (its key read once), without a place in the services. */
const linksOf = new WeakMap<object, ShareLinks>();
export function shareLinksFor(config: Pick<Config, 'dataDir' | 'lfs'>): ShareLinks {
  let links = linksOf.get(config);
  if (!links) linksOf.set(config, (links = createShareLinks(config)));
  return links;
}
