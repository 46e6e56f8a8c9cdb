/**
 * Fairness of a shared pactum: what one tenant, an anonymous client or a burst does to everyone
 * else. Each part (a file in scripts/bench/fairness/) measures something a bystander feels, alone
 * and beside the flood, side by side in this one run:
 *
 *   scans         another org's one-page scan, on an idle server and while one org floods the queue
 *   deep-json     /healthz latency (p99) and the server's RSS while anonymous clients send deep JSON
 *   fix-drafting  /healthz latency (p99) while members draft fixes for large markup
 *
 *   make build && npx tsx scripts/bench/fairness.ts [--quick] [--only scans,deep-json]
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string' } } });
const here = join(dirname(fileURLToPath(import.meta.url)), 'fairness');

/** A part: measures, prints its lines, and records its figures (lib.ts record). */
export type FairnessPart = (opts: { quick: boolean }) => Promise<void>;

const parts = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'lib.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((name) => !values.only || values.only.split(',').includes(name))
  .sort();
for (const name of parts) {
  console.log(`\n-- ${name}`);
  const part = (await import(join(here, `${name}.ts`))) as { default: FairnessPart };
  await part.default({ quick: Boolean(values.quick) });
}
