/**
 * What a snippet costs to draft a fix for is set by its tree, not its length: the recipes walk
 * ancestors and subtrees, so the work grows with the elements times their nesting. Both are
 * measured here, in one pass of the HTML parser (parse5, the one jsdom uses) with no DOM built,
 * before jsdom or any recipe sees the snippet. The pass stops at the first element over the limit,
 * so markup the parser multiplies (misnested formatting elements are re-opened in every block that
 * follows them) costs no more than the limit either.
 */
import { defaultTreeAdapter, parse, type DefaultTreeAdapterMap, type TreeAdapter } from 'parse5';
import { contextPrefix } from './markup.js';

export interface FixBudget {
  /** Most elements the parsed snippet may hold (the implied html, head and body count). */
  maxElements: number;
  /** Most elements nested inside one another (html and body count). */
  maxDepth: number;
}

export interface MarkupSize {
  elements: number;
  depth: number;
}

/** The snippet is over a limit: which one, the limit, and what was found (for elements: more than the limit). */
export class FixBudgetError extends Error {
  constructor(
    readonly limit: keyof MarkupSize,
    readonly max: number,
    readonly found: number,
  ) {
    super(limit === 'elements' ? `the markup has more than ${max} elements` : `the markup nests elements ${found} deep, more than ${max}`);
    this.name = 'FixBudgetError';
  }
}

type P5Node = DefaultTreeAdapterMap['node'];
type P5Parent = DefaultTreeAdapterMap['parentNode'];

const childrenOf = (node: P5Node): P5Node[] => ('childNodes' in node ? node.childNodes : []);
const isElement = (node: P5Node): node is DefaultTreeAdapterMap['element'] => 'tagName' in node;

/** The deepest element nesting under `root`, template contents included; iterative, so no depth overflows the stack. */
function depthOf(root: P5Parent): number {
  let deepest = 0;
  const stack: Array<[P5Node, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    const own = isElement(node) ? depth + 1 : depth;
    deepest = Math.max(deepest, own);
    for (const child of childrenOf(node)) stack.push([child, own]);
    if (isElement(node) && 'content' in node) stack.push([node.content, own]);
  }
  return deepest;
}

/**
 * The snippet's elements and nesting, parsed as the fix engine parses it (a whole document, with
 * the same table context a table-part fragment gets).
 * @throws FixBudgetError past a limit (elements: as soon as the parser creates one too many).
 */
export function measureMarkup(html: string, budget: FixBudget): MarkupSize {
  let elements = 0;
  const counting: TreeAdapter<DefaultTreeAdapterMap> = {
    ...defaultTreeAdapter,
    createElement(tagName, namespaceURI, attrs) {
      if (++elements > budget.maxElements) throw new FixBudgetError('elements', budget.maxElements, elements);
      return defaultTreeAdapter.createElement(tagName, namespaceURI, attrs);
    },
  };
  // jsdom parses with scripting off, so <noscript> content is markup here too.
  const document = parse(contextPrefix(html) + html, { treeAdapter: counting, scriptingEnabled: false });
  const depth = depthOf(document);
  if (depth > budget.maxDepth) throw new FixBudgetError('depth', budget.maxDepth, depth);
  return { elements, depth };
}
