/**
 * Where a server's CPU went, from the V8 profiles a bench run leaves behind: self time by area
 * (pactum's own directories, each npm package, Node's internals, GC) and the dearest functions.
 *
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npx tsx scripts/bench/mcp.ts --rounds 1
 *   npx tsx scripts/bench/profile-top.ts /tmp/prof [--top 15]
 *
 * Idle time (the event loop waiting) is left out of the shares: they are of busy time.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isIdle, samplesOf, type CallFrame } from './cpu-profile.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '15' } } });
const top = Number(values.top);
const target = positionals[0];
if (!target) {
  console.error('usage: profile-top.ts <file.cpuprofile | directory of them> [--top N]');
  process.exit(2);
}

/**
 * The production build is a bundle (scripts/bundle.mjs): a frame in one of its chunks (any script
 * with a source map beside it) is read through the map, so that it is named by the file it came
 * from (src/… or a package in node_modules) and not by the chunk.
 */
const maps = new Map<string, SourceMap | undefined>();
function original(frame: CallFrame): CallFrame {
  if (!frame.url.startsWith('file://') || !frame.url.endsWith('.js')) return frame;
  let map = maps.get(frame.url);
  if (!maps.has(frame.url)) {
    const file = `${fileURLToPath(frame.url)}.map`;
    map = existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : undefined;
    maps.set(frame.url, map);
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber ?? 0);
  if (!entry || !('originalSource' in entry)) return frame;
  return { ...frame, url: entry.originalSource.replace(/^(\.\.\/)+/, '/'), lineNumber: entry.originalLine };
}

/** The area a frame's code belongs to: a package, a directory of pactum's, Node itself, or V8's own entries. */
function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(?:dist\/)?(src\/[^/]+(?:\/[^/.]+)?)\//.exec(url);
  return own ? own[1]! : url.replace(/^file:\/\//, '');
}

const files = statSync(target).isDirectory() ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f)) : [target];
const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
let busy = 0;
let idle = 0;
for (const file of files) {
  for (const sample of samplesOf(file)) {
    const { us } = sample;
    const frame = original(sample.frame);
    if (isIdle(frame)) {
      idle += us;
      continue;
    }
    busy += us;
    const area = areaOf(frame);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${frame.lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
}

const share = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
console.log(`${files.length} profile(s): busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
console.log('\nself time by area');
for (const [area, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(us)}  ${area}`);
console.log('\ndearest functions (self time)');
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(us)}  ${name}`);
