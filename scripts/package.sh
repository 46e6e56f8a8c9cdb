#!/usr/bin/env bash
# `make package` (after `make build`): the npm package as a tarball in .build/package/, and its
# size. What it holds is package.json's `files`: the bundle (dist/pactum/, no source maps), the
# prebuilt report view, the bundled specs and the mock's specs (generated/), and specs/ (the
# contract as written). Publish the tarball from CI: `npm publish .build/package/<file>.tgz`
# (publishConfig asks for provenance, which npm gives only in a supported CI).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x dist/pactum/main.js ] && [ -f dist/pactum/report-view/view.js ] || { echo "no build in dist/pactum: run make build first" >&2; exit 2; }
out=.build/package
mkdir -p "$out"
rm -f "$out"/*.tgz
npm pack --silent --pack-destination "$out" --json > "$out/pack.json"
node -e '
  const [p] = require(process.argv[1]);
  const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
  console.log(`${p.name}@${p.version}: ${process.argv[2]}/${p.filename}`);
  console.log(`  ${mb(p.size)} packed, ${mb(p.unpackedSize)} unpacked, ${p.entryCount} files`);
' "$PWD/$out/pack.json" "$out"

# npm provenance ties the package to the repository its release job runs in: package.json must name it.
origin=$(git remote get-url origin 2>/dev/null || true)
declared=$(node -p 'require("./package.json").repository.url')
if [ -n "$origin" ]; then
  norm() { sed -E 's#^git\+##; s#^git@github.com:#https://github.com/#; s#\.git$##' <<<"$1"; }
  [ "$(norm "$origin")" = "$(norm "$declared")" ] || echo "warning: package.json repository ($declared) is not this checkout's origin ($origin); npm provenance will refuse the publish" >&2
fi
