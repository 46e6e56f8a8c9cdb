/**
 * The layers of src/, read top-down: a module may import from its own layer and from the layers
 * below it, never from one above, and never from another layer of its own tier. `make lint`
 * (dependency-cruiser) fails on any import that breaks this; docs/layout.md says what each layer
 * is for and where new code goes. generated/ is the contract's output and may be imported
 * anywhere; tests are not part of a layer.
 */
const TIERS = [
  // The composition: the command, the process, and what binds everything together.
  [{ name: 'cli', path: '^src/cli/', why: 'the pactum command: parses a command line and calls what it names' }],
  [{ name: 'server', path: '^src/server\\.ts$', why: 'the process: listens, starts and stops the parts' }],
  [{ name: 'app', path: '^src/app/', why: 'the composition root: builds the services, binds each operationId to its handler, stacks the middleware' }],
  // Features: each answers part of the contract.
  [
    { name: 'mcp', path: '^src/mcp/', why: 'the MCP endpoint and its tools' },
  ],
  [
    { name: 'ops', path: '^src/ops/', why: 'the operational endpoints: /, /healthz, /readyz, /docs, /metrics' },
    { name: 'conformance', path: '^src/conformance/', why: 'the conformance runner (pactum conformance), a client of any server' },
    { name: 'mock', path: '^src/mock/', why: 'the Prism mock servers (pactum mock), for client teams without a server' },
    { name: 'monitoring', path: '^src/monitoring/', why: 'scheduled scans compared run to run, and signed webhooks for their new findings' },
  ],
  [{ name: 'scans', path: '^src/scans/', why: 'the scan queue: claims, runs and records scans' }],
  [{ name: 'reports', path: '^src/reports/', why: 'reports for people and pipelines: the page, the exports, the screenshots' }],
  [{ name: 'objects', path: '^src/objects/', why: 'the object APIs (Git LFS) and the object store' }],
  [{ name: 'auth', path: '^src/auth/', why: 'who the caller is: tokens, sessions, passwords, the security schemes' }],
  // What every feature stands on.
  [{ name: 'compute', path: '^src/compute/', why: 'work whose cost grows with its input, in worker threads' }],
  [{ name: 'http', path: '^src/http/', why: 'the HTTP kernel: routing from the spec, errors, media types, bodies, request state, connection guards' }],
  [{ name: 'db', path: '^src/db/', why: 'storage: knex, migrations, repositories' }],
  [{ name: 'telemetry', path: '^src/telemetry/', why: 'logs, metrics and traces; knows no feature, database or route' }],
  [
    { name: 'domain', path: '^src/domain/', why: 'the engines (scan, fix, brand, regulations, reports, access), free of HTTP, MCP and storage' },
    { name: 'report-view', path: '^src/report-view/', why: 'the report view as the browser runs it' },
    { name: 'spec', path: '^src/spec/', why: 'reading the bundled specs' },
  ],
  [{ name: 'ground', path: '^src/ground/', why: 'settings, ids, key files and small utilities everything may use' }],
];

const layers = TIERS.flat();
const rank = new Map(TIERS.flatMap((tier, i) => tier.map((l) => [l.name, TIERS.length - 1 - i])));
const above = (layer) => layers.filter((other) => other !== layer && rank.get(other.name) >= rank.get(layer.name));

module.exports = {
  forbidden: [
    ...layers.filter((layer) => above(layer).length > 0).map((layer) => ({
      name: `${layer.name}-imports-only-below`,
      comment: `${layer.name} (${layer.why}) may use only the layers below it: ${layers.filter((l) => rank.get(l.name) < rank.get(layer.name)).map((l) => l.name).join(', ') || 'none'}`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: `(${above(layer).map((l) => l.path).join('|')})` },
    })),
    {
      name: 'clients-stand-apart',
      comment: 'src/clients is shipped inside the generated TypeScript client: it may import nothing else of src/',
      severity: 'error',
      from: { path: '^src/clients/' },
      to: { path: '^src/(?!clients/)' },
    },
    {
      name: 'no-circular',
      comment: 'no import circles',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'every-file-in-a-layer',
      comment: 'every source file belongs to a layer (or to src/clients)',
      severity: 'error',
      from: { path: '^src/', pathNot: `(${layers.map((l) => l.path).join('|')}|^src/clients/)` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^generated/'] },
    exclude: { path: ['^test/', '^dist/', '^scripts/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'] },
  },
};
// Not a dependency-cruiser option, so not enumerable (it validates its options): the tiers, for
// scripts/layers-picture.mjs, which draws them in docs/layout.md.
Object.defineProperty(module.exports, 'tiers', { value: TIERS, enumerable: false });
