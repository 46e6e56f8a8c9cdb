/** Media types: parsed, never compared as raw strings (git-lfs sends `...+json; charset=utf-8`). */
import type { Context } from 'koa';
import type { ApiName } from '../../generated/operations.js';

export const OBJSTORE_JSON = 'application/vnd.objstore+json';
export const GIT_LFS_JSON = 'application/vnd.git-lfs+json';
export const LFS_JSON_TYPES = [OBJSTORE_JSON, GIT_LFS_JSON] as const;

/**
 * The JSON type to answer in. Object APIs answer in the vendor type the client asked for —
 * git-lfs rejects any other — and in the seeds' objstore type when it asked for anything.
 */
export function jsonTypeFor(ctx: Context, api: ApiName): string {
  if (api === 'dashboard') return 'application/json';
  // negotiator ranks by quality, then specificity, so `vnd.git-lfs+json, */*` picks git-lfs.
  return ctx.accepts(OBJSTORE_JSON, GIT_LFS_JSON) === GIT_LFS_JSON ? GIT_LFS_JSON : OBJSTORE_JSON;
}
