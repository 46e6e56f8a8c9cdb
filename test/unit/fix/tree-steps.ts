/**
 * Counts the steps jsdom takes through its trees: every read of a node's parent, children or
 * siblings goes through its symbol-tree, so the count measures DOM work without a clock. Steps
 * jsdom takes to number a node among its siblings (for live ranges, on every insertion and
 * removal) are also counted apart.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export interface TreeSteps {
  /** Every step through the tree. */
  all: number;
  /** Of those, the steps jsdom took to number a node among its siblings. */
  numbering: number;
}

const require = createRequire(import.meta.url);
/** The prototype of jsdom's symbol-tree, whose methods are wrapped here (as functions of `this`). */
interface TreeMethods {
  _node: (this: unknown, o: object) => unknown;
  index: (this: unknown, o: object) => number;
}
const SymbolTree = require(require.resolve('symbol-tree', { paths: [dirname(require.resolve('jsdom'))] })) as { prototype: TreeMethods };

let steps: TreeSteps = { all: 0, numbering: 0 };

/** Installs the counter for the test file. */
export function countTreeSteps(): void {
  const original = { node: SymbolTree.prototype._node, index: SymbolTree.prototype.index };
  beforeAll(() => {
    SymbolTree.prototype._node = function (o) {
      steps.all++;
      return original.node.call(this, o);
    };
    SymbolTree.prototype.index = function (o) {
      const before = steps.all;
      const at = original.index.call(this, o);
      steps.numbering += steps.all - before;
      return at;
    };
  });
  afterAll(() => {
    SymbolTree.prototype._node = original.node;
    SymbolTree.prototype.index = original.index;
  });
}

/** The steps `work` took. */
export function stepsOf(work: () => void): TreeSteps {
  steps = { all: 0, numbering: 0 };
  work();
  return steps;
}
