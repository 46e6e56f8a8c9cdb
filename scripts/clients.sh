#!/usr/bin/env bash
# `make clients`: partner clients in other languages (typescript-fetch, python, go, java) with
# OpenAPI Generator, as configured in openapitools.json, into clients/<api>/<generator>/.
# OpenAPI Generator is a Java program whose jar comes from Maven Central; where Java or the jar
# is missing this says so and stops (exit 0), so a machine without them knows what to install.
# The npm-native TypeScript client needs neither: `make generate` writes it to generated/clients/.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(node -e 'console.log(require("./openapitools.json")["generator-cli"].version)')
jar=${OPENAPI_GENERATOR_JAR:-}
if [ -z "$jar" ]; then
  for candidate in "node_modules/@openapitools/openapi-generator-cli/versions/$version.jar" "$HOME/.m2/repository/org/openapitools/openapi-generator-cli/$version/openapi-generator-cli-$version.jar"; do
    if [ -f "$candidate" ]; then jar=$candidate; break; fi
  done
fi
if ! command -v java >/dev/null 2>&1; then
  echo "make clients: skipped — Java is not installed. OpenAPI Generator $version needs a JRE (11 or later)."
  exit 0
fi
if [ -z "$jar" ] || [ ! -f "$jar" ]; then
  echo "make clients: skipped — the OpenAPI Generator $version jar is not available (it comes from Maven Central,"
  echo "  which this machine cannot reach). Download openapi-generator-cli-$version.jar and run:"
  echo "  OPENAPI_GENERATOR_JAR=/path/to/openapi-generator-cli-$version.jar make clients"
  echo "  The TypeScript client is generated without Java by 'make generate' into generated/clients/."
  exit 0
fi
node -e '
  const g = require("./openapitools.json")["generator-cli"].generators;
  for (const [key, c] of Object.entries(g)) {
    const props = Object.entries(c.additionalProperties || {}).map(([k, v]) => `${k}=${v}`).join(",");
    console.log([key, c.generatorName, c.inputSpec, c.output, props].join("\t"));
  }' | while IFS=$'\t' read -r key generator input output props; do
  echo "== $key"
  rm -rf "$output"
  java -jar "$jar" generate -g "$generator" -i "$input" -o "$output" ${props:+--additional-properties "$props"} --skip-validate-spec >/dev/null
done
echo "clients written to clients/"
