/**
 * The README's examples run in order as one session: the same user has the same password in
 * every example that gives it (creating it, git's credential store, the conformance runner).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README examples', () => {
  it("give ada one password everywhere it is typed", () => {
    const created = [...readme.matchAll(/echo '([^']+)' \| pactum user create ada\b/g)].map((m) => m[1]);
    const inUrls = [...readme.matchAll(/\/\/ada:([^@\s]+)@/g)].map((m) => m[1]);
    const basic = [...readme.matchAll(/--basic ada:(\S+)/g)].map((m) => m[1]);
    const uses = [...inUrls, ...basic];
    expect(created).toHaveLength(1);
    expect(uses.length).toBeGreaterThan(0);
    expect(new Set(uses)).toEqual(new Set(created));
  });
});
