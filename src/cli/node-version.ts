/**
 * pactum needs Node 22 or later (better-sqlite3 13's binaries, pg-boss 12): on an older Node the
 * native module crashes the process without a word. Checked before anything else loads, so an
 * old `node` gets one line that names the fix instead: in a checkout, the Node that make fetched;
 * installed as a package, a newer Node.
 */
import { runsFromCheckout } from '../ground/default-data-dir.js';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const fix = runsFromCheckout()
    ? 'Run bin/pactum from the checkout (it uses the Node 24 that make fetched into .node/), or eval "$(make -s env)" first.'
    : 'Install Node 24 LTS (or 22) and run pactum with it: npm installed pactum for the node it found first on PATH.';
  process.stderr.write(`pactum needs Node 22 or later; this is Node ${process.versions.node}. ${fix}\n`);
  process.exit(2);
}
export {};
