#!/usr/bin/env bash
# `make clients`: the partner clients, with OpenAPI Generator through its npm wrapper
# (@openapitools/openapi-generator-cli), as openapitools.json configures them, into .build/clients/:
#   pactum.openapi.json   the three specs as one document (scripts/clients/spec.ts)
#   typescript/           typescript-fetch, plus the MCP tool wrapper and the object-API fetch
#   java/                 java (the okhttp-gson library, as openapitools.json sets), with its pom.xml
#   python/               python, with its pyproject.toml
#   go/                   go, with its go.mod
#
# The generator's jar comes through Maven (`mvn dependency:copy`, the machine's configured
# repositories) into the wrapper's storageDir; the wrapper is then only a launcher: with the jar
# present and the version pinned it asks no network (OPENAPI_GENERATOR_CLI_SEARCH_URL=DEFAULT also
# keeps its version list offline). OPENAPI_GENERATOR_JAR=/path/to.jar uses a jar you already have.
#
#   scripts/clients.sh               fetch the jar when it is missing, then generate
#   scripts/clients.sh --fetch-jar   only fetch the jar (make test then generates with no network)
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/clients
config() { node -p "require('./openapitools.json')['generator-cli']$1"; }
version=$(config .version)
storage=$(config .storageDir)
jar="$storage/$version.jar"

if ! command -v java >/dev/null 2>&1; then
  echo "make clients: Java is not installed; OpenAPI Generator $version needs a JRE 11 or later (apt-get install default-jdk-headless)." >&2
  exit 2
fi
if [ ! -f "$jar" ]; then
  mkdir -p "$storage"
  if [ -n "${OPENAPI_GENERATOR_JAR:-}" ]; then
    cp "$OPENAPI_GENERATOR_JAR" "$jar"
  elif command -v mvn >/dev/null 2>&1; then
    echo "== openapi-generator-cli $version through Maven"
    tmp=$(mktemp -d "$storage/.fetch-XXXXXX")
    # The plugin is named with its version, so the goal does not depend on Maven's default.
    # (Maven 3.8 prints colour resets even in batch mode: they are dropped.)
    mvn -q -B -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy \
      -Dartifact="org.openapitools:openapi-generator-cli:$version" -DoutputDirectory="$tmp" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
    mv "$tmp/openapi-generator-cli-$version.jar" "$jar"
    rm -rf "$tmp"
  else
    echo "make clients: the OpenAPI Generator $version jar is not in $storage and Maven is not installed to fetch it." >&2
    echo "  Install Maven (apt-get install maven), or run OPENAPI_GENERATOR_JAR=/path/to/openapi-generator-cli-$version.jar make clients" >&2
    exit 2
  fi
fi

[ "${1:-}" = --fetch-jar ] && { echo "openapi-generator-cli $version: $jar"; exit 0; }

started=$SECONDS
mkdir -p "$out"
npx tsx scripts/clients/spec.ts "$out/pactum.openapi.json"
rm -rf "$out/typescript" "$out/java" "$out/python" "$out/go"
# The Go generator formats its files with gofmt where Go is installed (enablePostProcessFile).
if command -v gofmt >/dev/null 2>&1; then export GO_POST_PROCESS_FILE="gofmt -w"; fi
# The wrapper runs the four generators of openapitools.json side by side; its log is kept.
if ! OPENAPI_GENERATOR_CLI_SEARCH_URL=DEFAULT npx openapi-generator-cli generate >"$out/generate.log" 2>&1; then
  grep -E 'ERROR|Exception|exited with code [1-9]' "$out/generate.log" | head -20 >&2 || true
  echo "make clients: the generator failed; its log is $out/generate.log" >&2
  exit 1
fi

# The TypeScript package also carries what a partner needs beyond the operations: the MCP tool
# wrapper (clients/typescript/src/) and the object APIs' client runtime (src/clients/objects-fetch.ts).
cp clients/typescript/src/*.ts src/clients/objects-fetch.ts "$out/typescript/src/"
{
  echo "export * from './mcp-tools.js';"
  echo "export * from './objects-fetch.js';"
} >>"$out/typescript/src/index.ts"

files() { find "$1" -type f ! -path '*/.openapi-generator/*' | wc -l; }
echo "openapi-generator $version (wrapper @openapitools/openapi-generator-cli $(node -p "require('@openapitools/openapi-generator-cli/package.json').version")), from $out/pactum.openapi.json:"
printf '  %-34s %5s files  %s\n' \
  "$out/typescript" "$(files "$out/typescript")" "package.json: $(node -p "require('./$out/typescript/package.json').name")" \
  "$out/java" "$(files "$out/java")" "pom.xml: $(sed -n 's:^    <artifactId>\(.*\)</artifactId>:\1:p' "$out/java/pom.xml" | head -1)" \
  "$out/python" "$(files "$out/python")" "pyproject.toml: $(sed -n 's/^name = "\(.*\)"/\1/p' "$out/python/pyproject.toml" | head -1)" \
  "$out/go" "$(files "$out/go")" "go.mod: $(sed -n 's/^module //p' "$out/go/go.mod")"
echo "clients written in $((SECONDS - started)) s (generator log: $out/generate.log)"
