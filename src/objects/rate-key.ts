import type { Context } from 'koa';
import type { Identity } from '../auth/identity.js';

/** Rate limits count per user, or per address for anonymous callers. */
export const rateKey = (identity: Identity | null, ctx: Context) => `lfs:${identity ? identity.subject : `ip:${ctx.ip}`}`;
