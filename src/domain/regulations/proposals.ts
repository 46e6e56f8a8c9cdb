/**
 * Regulatory update proposals: the changes a source proposes to the data set, and the unified
 * diff a reviewer reads (each change's `before` → `after`, as stable, key-sorted JSON).
 */
import { createTwoFilesPatch } from 'diff';
import type { components } from '../../../generated/types/dashboard.js';

export type Proposal = components['schemas']['proposal'];
export type ProposedChange = components['schemas']['proposed-change'];

/** JSON with sorted keys, so a diff shows what changed and not how it was ordered. */
function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v;
  return value === null || value === undefined ? '' : `${JSON.stringify(sort(value), null, 2)}\n`;
}

export function proposalDiff(changes: ProposedChange[]): string {
  return changes
    .map((c) => {
      const label = `${c.entityType} ${c.entityId}`;
      return createTwoFilesPatch(`${label} (before)`, `${label} (after)`, stableJson(c.before), stableJson(c.after), undefined, undefined, { context: 3 })
        .replace(/^=+\n/, '')
        .replace(/^Index: .*\n/, '');
    })
    .join('');
}
