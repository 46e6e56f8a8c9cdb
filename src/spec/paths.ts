/**
 * Path templates of the operation table ("/{org}/{repo}.git/info/lfs/objects/{oid}") as regular
 * expressions, and the order to try them in. Shared by the router and the conformance runner.
 */
import type { OperationSpec } from '../../generated/operations.js';

export function templateRegex(template: string): RegExp {
  return new RegExp(
    '^' +
      template
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? `(?<${part.slice(1, -1)}>[^/]+)` : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('') +
      '$',
  );
}

const varCount = (t: string) => (t.match(/\{/g) ?? []).length;
const literalLength = (t: string) => t.replace(/\{[^}]+\}/g, '').length;

/** More literal text first: /{org}/{repo}.git/info/lfs/objects/batch before .../objects/{oid}. */
export const bySpecificity = (a: string, b: string) => varCount(a) - varCount(b) || literalLength(b) - literalLength(a);

/** The operation serving `method path`, if any (HEAD falls back to GET, as the router does). */
export function operationFor(operations: readonly OperationSpec[], method: string, path: string): OperationSpec | undefined {
  const templates = [...new Set(operations.map((o) => o.path))].sort(bySpecificity);
  for (const t of templates) {
    if (!templateRegex(t).test(path)) continue;
    const here = operations.filter((o) => o.path === t);
    const stub = here.find((o) => o.tool);
    return stub ?? here.find((o) => o.method === method) ?? (method === 'HEAD' ? here.find((o) => o.method === 'GET') : undefined);
  }
  return undefined;
}
