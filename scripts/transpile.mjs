#!/usr/bin/env node
/**
 * The quick build of `make run`: each TypeScript file of src/ and generated/ turned into
 * JavaScript on its own (TypeScript's transpileModule, the compiler options of tsconfig.json),
 * without type checking, into dist/ as `tsc -p tsconfig.build.json` lays it out. About 3 s
 * instead of tsc's 25 s on two cores. The type check stays in `make build`, `make typecheck` and
 * `make test`, and `make test` starts a server from this build (scripts/test.sh), so the two
 * cannot drift apart unnoticed.
 *
 *   node scripts/transpile.mjs [outDir]     (default dist)
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, process.argv[2] ?? 'dist');
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
// package.json says "type": "module": every file is ESM, which NodeNext would decide per file from it,
// a file without imports or exports included (tsc emits its `export {}`; a lone file would be a script).
const compilerOptions = { ...config.options, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, moduleDetection: ts.ModuleDetectionKind.Force, noEmit: false, sourceMap: false, declaration: false, isolatedModules: true };

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

rmSync(out, { recursive: true, force: true });
let files = 0;
for (const top of ['src', 'generated']) {
  for (const file of sources(join(root, top))) {
    const { outputText, diagnostics } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file, reportDiagnostics: true });
    if (diagnostics?.length) throw new Error(`${relative(root, file)}: ${ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n')}`);
    const target = join(out, relative(root, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
    files++;
  }
}
// tsc also emits the JSON modules sources import (resolveJsonModule): the data files under src/.
const json = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? json(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : []));
for (const file of json(join(root, 'src'))) {
  const target = join(out, relative(root, file));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, JSON.stringify(JSON.parse(readFileSync(file, 'utf8')), null, 4) + '\n'); // as tsc writes it
}
chmodSync(join(out, 'src/cli/main.js'), 0o755);
console.log(`transpiled ${files} files into ${relative(root, out) || '.'} (no type check: make build does that)`);
