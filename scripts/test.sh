#!/usr/bin/env bash
# Runs every check of `make test` and ends with one line "N passed, N failed": the vitest tests,
# plus each check that is not a vitest test (spec lint, code lint, drift, types, build) counted as one.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
passed=0
failed=0
failures=()

step() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

step "spec lint" npx redocly lint --format=stylish
step "code lint (typescript-eslint)" npx eslint . --max-warnings 0
step "generated/ drift" make -s check-generated
step "type check" npx tsc --noEmit -p tsconfig.json
step "layers of src/ and no import circles (dependency-cruiser)" npx depcruise src --config .dependency-cruiser.cjs --output-type err-long
step "the layers picture in docs/layout.md is current (make layers)" node scripts/layers-picture.mjs --check
step "build" make -s build
step "the pactum command keeps its execute bit" test -x dist/pactum/main.js
# `make run` builds with scripts/transpile.mjs (no type check): it must emit what tsc emits.
quick_build_matches_tsc() {
  node scripts/transpile.mjs .tmp/quick-dist >/dev/null || return 1
  local f n=0
  while IFS= read -r f; do
    n=$((n + 1))
    cmp -s <(sed '/^\/\/# sourceMappingURL/d' "dist/$f") ".tmp/quick-dist/$f" || { echo "differs from tsc: $f"; return 1; }
  done < <(cd .tmp/quick-dist && find . -type f)
  # dist/pactum/ is the bundle made from either (scripts/bundle.mjs), not tsc's output.
  local emitted
  emitted=$(cd dist && find . -path ./pactum -prune -o -type f ! -name '*.map' -print | wc -l)
  [ "$emitted" -eq "$n" ] || { echo "tsc emitted $emitted files, the quick build $n"; return 1; }
  echo "the quick build emits the same $n files as tsc"
}
step "make run's quick build equals tsc's" quick_build_matches_tsc
step "MCP conformance suites install (2025-11-25, 2026-07-28)" make -s install-conformance

# Runs vitest with a JSON report and adds its counts; a file that fails before its tests run
# (an import error, a failed beforeAll) counts as a failure too.
vitest_step() {
  local name=$1 report=$2; shift 2
  echo "== $name"
  rm -f "$report"
  "$@" --reporter=default --reporter=json --outputFile.json="$report"
  local status=$?
  if [ -f "$report" ]; then
    read -r vp vf < <(node -e '
      const r = require(process.argv[1]);
      const brokenFiles = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")).length;
      console.log(r.numPassedTests, r.numFailedTests + brokenFiles);' "$PWD/$report")
    passed=$((passed + vp)); failed=$((failed + vf))
    if [ "$status" -ne 0 ] && [ "$vf" -eq 0 ]; then failed=$((failed + 1)); failures+=("$name (exit $status)"); fi
    if [ "$vf" -gt 0 ]; then failures+=("$name"); fi
  else
    failed=$((failed + 1)); failures+=("$name (no report)")
  fi
}

echo "== Node $(node --version) at $(command -v node)"
vitest_step "vitest" .tmp/vitest.json npx vitest run
# The end-to-end suites made of real client traffic, once more with prism proxy --errors judging
# every response (any sl-violations entry fails them). The conformance runner and the official MCP
# suite stay out: they send requests Prism answers itself (undeclared methods, foreign hosts).
PACTUM_VIA_PRISM=1 vitest_step "end-to-end through prism proxy" .tmp/vitest-prism.json \
  npx vitest run test/e2e/git-lfs.test.ts test/e2e/mcp-admin-tools.test.ts test/e2e/mcp-accessibility.test.ts

# The whole suite again on PostgreSQL (127.0.0.1:5432, a database per test server) and S3
# (s3rver, started by test/global-setup.ts); then the suites of real client traffic against two
# instances sharing them, behind a round-robin proxy.
# test/global-setup.ts writes which S3 server each pass ran against (Ceph RGW, else s3rver).
rm -f .tmp/s3-server-*.txt
PACTUM_TEST_S3_REPORT=.tmp/s3-server-single.txt PACTUM_TEST_BACKEND=postgres-s3 vitest_step "on PostgreSQL and S3" .tmp/vitest-postgres-s3.json npx vitest run
PACTUM_TEST_S3_REPORT=.tmp/s3-server-pair.txt PACTUM_TEST_BACKEND=postgres-s3 PACTUM_TEST_TOPOLOGY=pair vitest_step "two instances behind a round-robin proxy" .tmp/vitest-pair.json \
  npx vitest run test/e2e/git-lfs.test.ts test/e2e/mcp-admin-tools.test.ts test/e2e/mcp-accessibility.test.ts test/e2e/mcp-2026.test.ts test/integration/objects-http.test.ts

# pactum outside its checkout, once: the npm package through a Verdaccio registry on loopback
# (npx scan, npm install -g), the container images with podman (make image's script; skipped, with
# the reason printed, where podman cannot run containers), and the docs' recipes run verbatim.
vitest_step "outside the checkout: the npm package, the container images, the docs' recipes" .tmp/vitest-outside.json \
  npx vitest run --config vitest.outside.config.ts

# The partner clients (`make clients`, OpenAPI Generator through its npm wrapper), where Java and
# Maven are installed: the jar through Maven, then the four clients generated inside a network
# namespace with no network (so the wrapper provably downloads nothing), the Java and TypeScript
# clients against live servers (test/clients/), and the Python and Go clients' syntax.
python_client_compiles() {
  local files
  files=$(find .build/clients/python -name '*.py' | wc -l)
  find .build/clients/python -name '*.py' -print0 | xargs -0 python3 -m py_compile || return 1
  echo "$files Python files compiled"
}
go_client_is_gofmt_clean() {
  local out
  out=$(gofmt -l .build/clients/go) || { echo "$out"; return 1; }
  [ -z "$out" ] || { echo "gofmt would change:"; echo "$out"; return 1; }
  echo "$(find .build/clients/go -name '*.go' | wc -l) Go files parsed, none to reformat"
}
if command -v java >/dev/null && command -v mvn >/dev/null; then
  step "OpenAPI Generator jar through Maven" bash scripts/clients.sh --fetch-jar
  if unshare -n true 2>/dev/null; then
    step "make clients with no network (unshare -n)" unshare -n bash scripts/clients.sh
  else
    step "make clients" bash scripts/clients.sh
  fi
  vitest_step "partner clients against a live server (Java: Maven and JUnit; TypeScript)" .tmp/vitest-clients.json npx vitest run --config vitest.clients.config.ts
  step "code lint of the TypeScript client test, with the client generated" env ESLINT_WITH_CLIENTS=1 npx eslint test/clients --max-warnings 0
  if command -v python3 >/dev/null; then step "Python client: python3 -m py_compile" python_client_compiles; fi
  if command -v gofmt >/dev/null; then step "Go client: gofmt -l" go_client_is_gofmt_clean; fi
else
  echo "== partner clients: not built: make clients needs Java and Maven (apt-get install default-jdk-headless maven)"
fi

# Every benchmark, small and short: each must complete and print its ratios (no goal enforced:
# machines here are noisy; `make bench` is the measurement).
step "benchmarks complete (make bench QUICK=1)" npx tsx scripts/bench/run-all.ts --quick

echo "S3 server of the PostgreSQL and S3 pass: $(cat .tmp/s3-server-single.txt 2>/dev/null || echo 'none started')"
echo "S3 server of the two-instance pass: $(cat .tmp/s3-server-pair.txt 2>/dev/null || echo 'none started')"
if [ ${#failures[@]} -gt 0 ]; then printf 'failed: %s\n' "${failures[@]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
