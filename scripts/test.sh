#!/usr/bin/env bash
# Runs every check of `make test` and ends with one line "N passed, N failed": the vitest tests,
# plus each check that is not a vitest test (spec lint, drift, types, build) counted as one.
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
step "generated/ drift" make -s check-generated
step "type check" npx tsc --noEmit -p tsconfig.json
step "build" make -s build
step "MCP conformance suite install" make -s install-conformance

echo "== vitest"
rm -f .tmp/vitest.json
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json
vitest_status=$?
if [ -f .tmp/vitest.json ]; then
  # A file that fails before its tests run (an import error, a failed beforeAll) counts as a failure too.
  read -r vp vf < <(node -e '
    const r = require("./.tmp/vitest.json");
    const brokenFiles = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")).length;
    console.log(r.numPassedTests, r.numFailedTests + brokenFiles);')
  passed=$((passed + vp)); failed=$((failed + vf))
  if [ "$vitest_status" -ne 0 ] && [ "$vf" -eq 0 ]; then failed=$((failed + 1)); failures+=("vitest (exit $vitest_status)"); fi
else
  failed=$((failed + 1)); failures+=("vitest (no report)")
fi

if [ ${#failures[@]} -gt 0 ]; then printf 'failed: %s\n' "${failures[@]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
