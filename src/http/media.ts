/**
 * Media types: parsed, never compared as raw strings (git-lfs sends `...+json; charset=utf-8`).
 * Accept parameters other than q are ignored: `application/vnd.git-lfs+json; charset=utf-8`
 * asks for that type.
 */
import type { Context } from 'koa';
import type { ApiName } from '../../generated/operations.js';

export const OBJSTORE_JSON = 'application/vnd.objstore+json';
export const GIT_LFS_JSON = 'application/vnd.git-lfs+json';
const OBJECT_JSON_TYPES = [OBJSTORE_JSON, GIT_LFS_JSON];

interface Range { type: string; subtype: string; q: number }

// Clients send the same few Accept headers again and again.
const parsed = new Map<string, Range[]>();

function parseAccept(header: string): Range[] {
  let ranges = parsed.get(header);
  if (ranges) return ranges;
  ranges = parseRanges(header);
  if (parsed.size >= 200) parsed.clear();
  parsed.set(header, ranges);
  return ranges;
}

function parseRanges(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';');
    const [type, subtype] = range!.trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() === 'q') q = Math.min(1, Math.max(0, Number(v) || 0));
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

// The types offered are the specs' and the code's own: a fixed few, split once each.
const offers = new Map<string, { type: string; subtype: string }>();

function offerOf(offer: string) {
  let split = offers.get(offer);
  if (!split) {
    const [type = '', subtype = ''] = offer.toLowerCase().split('/');
    offers.set(offer, (split = { type, subtype }));
  }
  return split;
}

/**
 * The offered type the Accept header prefers: the most specific matching range decides each
 * type's quality (RFC 9110 §12.5.1); ties go to the earlier offer. No header admits anything.
 * Returns null when nothing offered is acceptable.
 */
export function negotiate(accept: string | undefined, offered: readonly string[]): string | null {
  if (!accept || !accept.trim()) return offered[0] ?? null;
  const ranges = parseAccept(accept);
  let best: string | null = null;
  let bestQ = 0;
  let bestSpecificity = -1;
  for (const offer of offered) {
    const { type, subtype } = offerOf(offer);
    let q = -1;
    let specificity = -1;
    for (const r of ranges) {
      const s = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
      if (s > specificity) {
        specificity = s;
        q = r.q;
      }
    }
    if (q > bestQ || (q === bestQ && q > 0 && specificity > bestSpecificity)) {
      best = offer;
      bestQ = q;
      bestSpecificity = specificity;
    }
  }
  return best;
}

/**
 * The JSON type to answer in. Object APIs answer in the vendor type the client asked for —
 * git-lfs rejects any other — and in the seeds' objstore type when it asked for any.
 */
export function jsonTypeFor(ctx: Context, api: ApiName): string {
  if (api === 'dashboard') return 'application/json';
  return negotiate(ctx.get('accept'), OBJECT_JSON_TYPES) === GIT_LFS_JSON ? GIT_LFS_JSON : OBJSTORE_JSON;
}
