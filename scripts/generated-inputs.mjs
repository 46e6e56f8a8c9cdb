#!/usr/bin/env node
/**
 * The fingerprint of what generated/ is made from: the specs, the generator and its libraries,
 * and the locked dependency versions. scripts/generate.ts records it in generated/INPUTS; with
 * --check this exits 0 when generated/ was made from the files as they are, so `make run` can
 * leave out the generator (6 s) on a fresh clone, where CI has already checked generated/.
 *
 *   node scripts/generated-inputs.mjs           print the fingerprint
 *   node scripts/generated-inputs.mjs --check   exit 0 if generated/INPUTS holds it, else 1
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// What scripts/generate.ts reads or imports (besides packages, pinned by the lock file).
const INPUTS = ['specs', 'scripts/generate.ts', 'src/mock/spec.ts', 'src/spec/documents.ts', 'package-lock.json'];

function files(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).sort().flatMap((name) => files(join(path, name)));
}

export function fingerprint() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((p) => files(join(root, p)))) {
    // Line endings normalised: a checkout with CRLF is the same input.
    hash.update(relative(root, file)).update('\0').update(readFileSync(file, 'utf8').replace(/\r\n/g, '\n')).update('\0');
  }
  return hash.digest('hex');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const current = fingerprint();
  if (process.argv[2] === '--check') {
    const file = join(root, 'generated', 'INPUTS');
    process.exit(existsSync(file) && readFileSync(file, 'utf8').trim() === current ? 0 : 1);
  }
  console.log(current);
}
