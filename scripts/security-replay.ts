/**
 * Replays the known attacks and faults against one build of pactum and prints, per attack, what
 * the server did. Run it against today's build and an older one side by side to see a hole close:
 *
 *   make build && npx tsx scripts/security-replay.ts                 # ./dist
 *   git worktree add /tmp/old <commit> && (cd /tmp/old && ln -s $PWD/node_modules . && npx tsc -p tsconfig.build.json)
 *   npx tsx scripts/security-replay.ts /tmp/old/dist
 *   npx tsx scripts/security-replay.ts dist shared-service            # only the groups whose file name contains it
 *
 * Each line is "attack: result", where the result is what a client saw. The attacks live in
 * scripts/replay/, one file per group; each group starts its own server (a fresh DATA_DIR, SQLite,
 * fs store) and sets it up through the same build's CLI.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = resolve(process.argv[2] ?? 'dist');
const only = process.argv[3];
const here = join(dirname(fileURLToPath(import.meta.url)), 'replay');

async function main() {
  console.log(`build ${dist}`);
  const groups = readdirSync(here)
    .filter((f) => f.endsWith('.ts') && f !== 'harness.ts' && (!only || f.includes(only)))
    .sort();
  for (const file of groups) {
    console.log(`\n## ${file.replace(/\.ts$/, '')}`);
    const group = (await import(join(here, file))) as { default: (dist: string) => Promise<void> };
    await group.default(dist);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
