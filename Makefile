# pactum — every command a user needs; `make help` lists them.
SHELL := /bin/bash
# Node 24 LTS (.node-version): the machine's own node when it is 22 or later, else Node 24 fetched
# once from the npm registry into .node/ (scripts/ensure-node.sh says which, in one line).
NODE_BIN := $(shell bash scripts/ensure-node.sh)
ifneq ($(.SHELLSTATUS),0)
$(error pactum needs Node 22 or later, and Node 24 could not be fetched: see the line above)
endif
ifneq ($(NODE_BIN),)
export PATH := $(NODE_BIN):$(PATH)
endif
NPM_STAMP := node_modules/.installed
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true
export npm_config_fund := false
export npm_config_audit := false
export npm_config_update_notifier := false

.PHONY: env help install install-conformance generate clients conformance mcp-conformance mock check-generated lint layers typecheck build package image migrate run serve test reliability bench act clean clean-data

env: ## the line that puts pactum's Node first on PATH in your shell: eval "$$(make -s env)"
	@$(if $(NODE_BIN),echo 'export PATH="$(NODE_BIN):$$PATH"',echo '# this machine'"'"'s node is recent enough: nothing to change')

help: ## this list
	@# The descriptions are Makefile text, where $$ stands for $: shown as a shell takes them.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/; s/\$$\$$/$$/g' | column -t -s $$'\t'

# better-sqlite3 13 ships prebuilt binaries in its package: no package needs its install script.
$(NPM_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-fund --no-audit
	@touch $@

install: $(NPM_STAMP) ## install dependencies (npm ci) when package-lock.json changed

# Two releases of the suite, each pinned exactly in its own directory: 0.1.16 is the last release
# for revision 2025-11-25 (test/conformance/mcp/); the 0.2 alphas are the only releases with the
# 2026-07-28 scenarios (test/conformance/mcp-2026-07-28/).
CONFORMANCE_STAMP := test/conformance/mcp/node_modules/.installed
$(CONFORMANCE_STAMP): test/conformance/mcp/package.json test/conformance/mcp/package-lock.json
	npm ci --prefix test/conformance/mcp --no-fund --no-audit
	@touch $@
CONFORMANCE_2026_STAMP := test/conformance/mcp-2026-07-28/node_modules/.installed
$(CONFORMANCE_2026_STAMP): test/conformance/mcp-2026-07-28/package.json test/conformance/mcp-2026-07-28/package-lock.json
	npm ci --prefix test/conformance/mcp-2026-07-28 --no-fund --no-audit
	@touch $@

install-conformance: $(CONFORMANCE_STAMP) $(CONFORMANCE_2026_STAMP) ## install the official MCP conformance suite, for 2025-11-25 and for 2026-07-28 (apart from the project)

generate: $(NPM_STAMP) ## regenerate generated/ from specs/ (and docs/tools.md from the tool catalogue)
	npx tsx scripts/generate.ts
	npx tsx scripts/docs-tools.ts

check-generated: install ## fail when generated/ differs from what specs/ produce
	@tmp=$$(mktemp -d) && npx tsx scripts/generate.ts --out "$$tmp" >/dev/null && \
	  if diff -r -q generated "$$tmp" >/dev/null; then echo "generated/ is up to date"; rm -rf "$$tmp"; \
	  else diff -r -u generated "$$tmp" | head -40; echo "generated/ has drifted from specs/: run make generate"; rm -rf "$$tmp"; exit 1; fi

lint: install ## lint the three specs (Redocly, every rule an error), the code (typescript-eslint, zero warnings) and its layers (dependency-cruiser: .dependency-cruiser.cjs)
	npx redocly lint --format=stylish
	npx eslint . --max-warnings 0
	npx depcruise src --config .dependency-cruiser.cjs --output-type err-long
	node scripts/layers-picture.mjs --check

layers: install ## redraw the layers picture in docs/layout.md from src/ (make lint fails when it is stale)
	node scripts/layers-picture.mjs

typecheck: install ## TypeScript, sources and tests
	npx tsc --noEmit -p tsconfig.json

build: $(NPM_STAMP) ## compile to dist/, and bundle the pactum command into dist/pactum/
	rm -rf dist && npx tsc -p tsconfig.build.json
	@# tsc writes files without the execute bit.
	chmod +x dist/src/cli/main.js
	@# What production runs: a bundle keeps an idle server smaller (scripts/bundle.mjs says why).
	node scripts/bundle.mjs

package: build ## the npm package: a tarball in .build/package/ (what `npm publish` sends), and its size
	@bash scripts/package.sh

image: build ## container images (Containerfile): full with Chromium and slim with jsdom, built with podman, and their sizes (docs/production.md)
	@bash scripts/image.sh

migrate: install build ## apply database migrations
	node dist/pactum/main.js migrate

# Every connection is a descriptor: the soft limit is raised to the hard one first (Node does the
# same as it starts, on Linux), and the start line states the limit the server has.
run: generate-and-build ## install, generate, build, migrate and serve (SQLite in ./data, port 8080)
	ulimit -n "$$(ulimit -Hn)" && node dist/pactum/main.js serve

.PHONY: generate-and-build
generate-and-build: $(NPM_STAMP)
	@# generated/ is committed and drift-checked: regenerate only when its inputs changed.
	@if node scripts/generated-inputs.mjs --check; then echo "generated/ is up to date with specs/"; else $(MAKE) --no-print-directory generate; fi
	@# The quick build (no type check; make build and make test check types).
	node scripts/transpile.mjs
	node scripts/bundle.mjs

serve: ## serve the current build
	ulimit -n "$$(ulimit -Hn)" && node dist/pactum/main.js serve

test: install ## everything: spec lint, generated drift, types, unit/integration/e2e tests
	@bash scripts/test.sh

# One file at a time: the load test measures a server's memory and throughput on shared cores.
reliability: install ## the full reliability suite: fuzz, faults, load, security (RELIABILITY=full)
	RELIABILITY=full npx vitest run test/reliability --testTimeout=1800000 --hookTimeout=600000 --no-file-parallelism

clients: install ## partner clients (TypeScript, Java, Python, Go) into .build/clients/ with OpenAPI Generator (needs Java; Maven fetches its jar)
	@bash scripts/clients.sh

conformance: install ## check a server against the specs: make conformance TARGET=http://host:port [API=all] [TOKEN=...] [BASIC=user:pass] [REPO=org/repo] [ALLOW_WRITES=org/repo]
	@test -n "$(TARGET)" || { echo "usage: make conformance TARGET=http://host:port [API=all] [TOKEN=jwt] [BASIC=user:pass] [REPO=org/repo] [ALLOW_WRITES=org/repo]"; exit 2; }
	npx tsx src/cli/main.ts conformance --target "$(TARGET)" --api "$(or $(API),all)" $(if $(TOKEN),--token "$(TOKEN)") $(if $(BASIC),--basic "$(BASIC)") $(if $(REPO),--repo "$(REPO)") $(if $(ALLOW_WRITES),--allow-writes "$(ALLOW_WRITES)") $(if $(JUNIT),--junit "$(JUNIT)")

mcp-conformance: install install-conformance ## the official MCP conformance suite against a server, both revisions: make mcp-conformance TARGET=http://host:port TOKEN=<jwt> [REVISION=2025-11-25|2026-07-28] (docs/mcp.md)
	@test -n "$(TARGET)" -a -n "$(TOKEN)" || { echo "usage: make mcp-conformance TARGET=http://127.0.0.1:8080 TOKEN=<a bearer token of that server, e.g. from pactum token --user NAME>"; exit 2; }
	@npx tsx scripts/mcp-conformance.ts --target "$(TARGET)" --token "$(TOKEN)" $(if $(REVISION),--revision "$(REVISION)")

mock: install ## Prism mock servers of the three specs, one API per port: dashboard 4010, legacy 4011, batch 4012 (MOCK_PORT_BASE=N moves them to N..N+2; docs/mock.md)
	npx tsx scripts/mock.ts

act: install ## the ACT implementation report: make act ACT_RULES=DIR (a checkout of act-rules/act-rules.github.io) [ACT_ENGINES=chromium,jsdom] [ACT_RULE=id,id] [ACT_OUT=act-report]
	@test -n "$(ACT_RULES)" || { echo "make act needs ACT_RULES=DIR, a checkout of https://github.com/act-rules/act-rules.github.io"; exit 2; }
	ACT_RULES="$(ACT_RULES)" ACT_ENGINES="$(ACT_ENGINES)" ACT_RULE="$(ACT_RULE)" ACT_OUT="$(ACT_OUT)" npx tsx scripts/act-report.ts

bench: install build ## benchmarks as ratios against baselines run alongside; bench-results.json and .md (QUICK=1: a short smoke run)
	npx tsx scripts/bench/run-all.ts $(if $(QUICK),--quick)

clean: ## remove build output (dist/, .tmp/); keeps data/, the local database and objects
	rm -rf dist .tmp

clean-data: ## DELETE data/: the local SQLite database, its keys and every stored object (asks first; FORCE=1 does not)
	@test -d data || { echo "no data/ here: nothing to delete"; exit 0; }; \
	  if [ "$(FORCE)" != 1 ]; then read -r -p "delete $$(pwd)/data, the local database and objects? [y/N] " answer; \
	    [ "$$answer" = y ] || { echo "kept data/"; exit 0; }; fi; \
	  rm -rf data && echo "deleted data/"
