/**
 * docs/tools.md: every MCP tool's permission, arguments, result and example, written from the
 * generated catalogue (itself from specs/), so the page cannot drift from the contract.
 * `make generate` runs it; test/unit/docs-tools.test.ts fails when the page differs.
 *
 *   npx tsx scripts/docs-tools.ts           write docs/tools.md
 *   npx tsx scripts/docs-tools.ts --check   exit 1 when docs/tools.md is not what it would write
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tools, toolNames, type ToolSpec } from '../generated/tools.js';

type Schema = { type?: string | string[]; description?: string; title?: string; enum?: unknown[]; items?: Schema; properties?: Record<string, Schema>; required?: string[]; oneOf?: Schema[]; anyOf?: Schema[]; const?: unknown; examples?: unknown[]; format?: string; pattern?: string; minimum?: number; maximum?: number; default?: unknown };

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

/** A schema's type in a few words: string, integer 1–100, one of a/b/c, array of X. */
function typeOf(s: Schema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return `one of ${s.enum.map((e) => `\`${String(e)}\``).join(', ')}`;
  const alts = s.oneOf ?? s.anyOf;
  if (alts) return alts.map(typeOf).join(' or ');
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? (s.properties ? 'object' : 'any'));
  if (t === 'array' && s.items) return `array of ${typeOf(s.items)}`;
  const range = s.minimum !== undefined || s.maximum !== undefined ? ` ${s.minimum ?? ''}–${s.maximum ?? ''}` : '';
  return `${s.title && t === 'object' ? s.title : t}${range}${s.format ? ` (${s.format})` : ''}`;
}

function fieldTable(schema: Schema, heading: string[]): string[] {
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return ['(none)', ''];
  const required = new Set(schema.required ?? []);
  const rows = props.map(([name, p]) => {
    const dflt = p.default !== undefined ? ` Default \`${JSON.stringify(p.default)}\`.` : '';
    return `| \`${name}\` | ${cell(typeOf(p))} | ${required.has(name) ? 'yes' : ''} | ${cell((p.description ?? p.title ?? '') + dflt)} |`;
  });
  return [`| ${heading.join(' | ')} |`, `|${heading.map(() => '---').join('|')}|`, ...rows, ''];
}

function hints(t: ToolSpec): string {
  const a = t.annotations;
  const words = [a.readOnlyHint ? 'read-only' : a.destructiveHint ? 'changes or removes data' : 'changes data'];
  if (a.idempotentHint) words.push('idempotent');
  if (a.openWorldHint) words.push('reaches outside services');
  return words.join(', ');
}

export function renderToolsPage(): string {
  const out = [
    '# The MCP tools',
    '',
    '<!-- Written by scripts/docs-tools.ts from the tool catalogue (generated from specs/dashboard-mcp.openapi.yaml); do not edit: run make generate. -->',
    '',
    `\`POST /api/v1/mcp\` serves ${toolNames.length} tools. Each needs a permission (a caller sees in \`tools/list\` only the tools it may call);`,
    'an org-scoped tool works on the caller\'s own organization, and only `admin.system` may name another with `targetOrgId`.',
    'A call answers `structuredContent` valid against the tool\'s result schema, or `isError: true` with `{"error", "message"}`',
    '([the endpoint](mcp.md)). The full schemas are in `specs/schemas/tools/`.',
    '',
    '| tool | what it does | permission |',
    '|---|---|---|',
    ...toolNames.map((n) => `| [\`${n}\`](#${n}) | ${cell(tools[n].title)} | \`${tools[n].permission}\` |`),
    '',
  ];
  for (const n of toolNames) {
    const t = tools[n] as ToolSpec;
    const input = t.inputSchema as Schema;
    const output = t.outputSchema as Schema;
    out.push(`## ${n}`, '', `**${t.title}.** ${t.description}`, '', `Permission \`${t.permission}\`; ${hints(t)}.${t._meta ? ` Its results can be shown in the MCP App \`${t._meta.ui.resourceUri}\` ([reports](reports.md)).` : ''}`, '');
    out.push('Arguments:', '', ...fieldTable(input, ['argument', 'type', 'required', 'meaning']));
    out.push('Result:', '', ...fieldTable(output, ['field', 'type', 'always', 'meaning']));
    const example = input.examples?.[0];
    if (example !== undefined) out.push('Example arguments:', '', '```json', JSON.stringify(example), '```', '');
  }
  return out.join('\n').replace(/\n+$/, '\n');
}

const page = fileURLToPath(new URL('../docs/tools.md', import.meta.url));
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderToolsPage();
  if (process.argv.includes('--check')) {
    if (readFileSync(page, 'utf8') !== text) {
      console.error('docs/tools.md differs from the catalogue: run make generate');
      process.exit(1);
    }
  } else {
    writeFileSync(page, text);
    console.log(`wrote docs/tools.md (${toolNames.length} tools)`);
  }
}
