#!/usr/bin/env bash
# Time to first run: clones this repository into a scratch directory, runs `make run` there and
# prints how long it took until /healthz answered. On a machine whose node is older than 22 that
# includes fetching Node 24 into the clone's .node/ (scripts/ensure-node.sh). npm's package cache is
# left as it is (warm after one install on this machine); nothing is compiled (better-sqlite3 13
# ships prebuilt binaries).
#
#   bash scripts/bench/first-run.sh [runs] [port]        (default 2 runs, port 18180)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-2}
port=${2:-18180}

once() {
  local dir
  dir=$(mktemp -d)
  git clone -q "$repo" "$dir"
  local start=$(date +%s.%N)
  # Its own process group, so that the server make started is stopped with it.
  setsid bash -c "cd '$dir' && PORT=$port exec make run >run.log 2>&1" &
  local pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
    sleep 0.25
    kill -0 $pid 2>/dev/null || { echo "make run stopped:"; tail -20 "$dir/run.log"; exit 1; }
  done
  local end=$(date +%s.%N)
  local node_line
  node_line=$(grep -m1 -o 'using Node [^ ]* from [^ ]*' "$dir/run.log" || echo "the machine's own Node $(node --version)")
  printf 'fresh clone, run %d: serving after %5.1f s   (%s)\n' "$1" "$(echo "$end - $start" | bc)" "$node_line"
  kill -TERM -- -$pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  rm -rf "$dir"
}

echo "machine: $(nproc) cores, system node $(node --version 2>/dev/null || echo none)"
for i in $(seq 1 "$runs"); do once "$i"; done
