#!/usr/bin/env bash
# Builds the native modules that `npm ci --ignore-scripts` left unbuilt (the packages allowed to
# run scripts in package.json's allowScripts). better-sqlite3 compiles SQLite from source here
# (its prebuilt binaries come from github.com, which this kind of machine cannot reach): about
# 70 s on two cores, most of `make run` on a fresh machine. So each build is kept in a per-user
# cache, keyed by the module's version, Node's ABI and the platform, and a later install of the
# same versions (another clone, a CI run, `rm -rf node_modules`) copies it instead.
#
#   PACTUM_NATIVE_CACHE  the cache directory (default ${XDG_CACHE_HOME:-~/.cache}/pactum/native);
#                        set it to "off" to always build.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
key="better-sqlite3-${version}-node$(node -p process.versions.modules)-$(node -p 'process.platform + "-" + process.arch')"
cache=${PACTUM_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pactum/native}
binary=node_modules/better-sqlite3/build/Release/better_sqlite3.node

# esbuild's script only checks its platform package; it is quick.
npm rebuild esbuild --no-fund --no-audit >/dev/null

works() { node -e 'const D = require("better-sqlite3"); new D(":memory:").prepare("select 1").get()' 2>/dev/null; }

if [ "$cache" != off ] && [ -f "$cache/$key.node" ]; then
  mkdir -p "$(dirname "$binary")"
  cp "$cache/$key.node" "$binary"
  if works; then echo "better-sqlite3 $version: from the build cache ($cache/$key.node)"; exit 0; fi
  echo "better-sqlite3 $version: the cached build does not load; building it again"
fi

echo "better-sqlite3 $version: compiling SQLite (about a minute; kept in $cache for the next install)"
JOBS=max npm rebuild better-sqlite3 --no-fund --no-audit >/dev/null
works || { echo "better-sqlite3 $version was built but does not load" >&2; exit 1; }
if [ "$cache" != off ]; then
  # Copy then rename: two installs at once never see half a file. A cache that cannot be written
  # costs the next install a minute, nothing more.
  if ! { mkdir -p "$cache" && cp "$binary" "$cache/$key.node.$$" && mv "$cache/$key.node.$$" "$cache/$key.node"; } 2>/dev/null; then
    rm -f "$cache/$key.node.$$" 2>/dev/null || true
    echo "better-sqlite3 $version: could not keep the build in $cache (PACTUM_NATIVE_CACHE chooses another place)"
  fi
fi
