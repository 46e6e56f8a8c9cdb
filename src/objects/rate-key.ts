import type { Context } from 'koa';
import type { Identity } from '../domain/access/identity.js';

/** Rate limits count per user, or per address for anonymous callers. */
export const rateKey = (identity: Identity | null, ctx: Context) => `lfs:${identity ? identity.subject : `ip:${ctx.ip}`}`;

/** The object-API operations the request rate (LFS_RATE_LIMIT_PER_MINUTE) counts: not transfers, whose batch was counted. */
export const RATE_LIMITED: ReadonlySet<string> = new Set(['batch.batch', 'legacy.getObject', 'legacy.createObject', 'locks.create', 'locks.list', 'locks.verify', 'locks.unlock']);
