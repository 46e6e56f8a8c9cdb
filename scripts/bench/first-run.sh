#!/usr/bin/env bash
# Time to first run: clones this repository into a scratch directory, runs `make run` there and
# prints how long it took until /healthz answered, twice: with an empty native-build cache (a
# machine that never built better-sqlite3) and then with the cache that first run filled.
#
#   bash scripts/bench/first-run.sh [port]        (default port 18180; the npm cache is left as it is)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
port=${1:-18180}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

once() {
  local label=$1 dir
  dir=$(mktemp -d)
  git clone -q "$repo" "$dir"
  local start=$(date +%s.%N)
  # Its own process group, so that the server make started is stopped with it.
  setsid bash -c "cd '$dir' && PACTUM_NATIVE_CACHE='$cache' PORT=$port exec make run >run.log 2>&1" &
  local pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
    sleep 0.25
    kill -0 $pid 2>/dev/null || { echo "make run stopped:"; tail -20 "$dir/run.log"; exit 1; }
  done
  local end=$(date +%s.%N)
  printf '%-34s serving after %5.1f s   (%s)\n' "$label" "$(echo "$end - $start" | bc)" "$(grep -o 'better-sqlite3 [^:]*: [a-z ]*' "$dir/run.log" | head -1)"
  kill -TERM -- -$pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  rm -rf "$dir"
}

once "fresh clone, empty native cache"
once "fresh clone, native build cached"
