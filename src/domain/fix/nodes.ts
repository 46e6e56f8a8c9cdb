/**
 * Node types, and a node's children read by walking its siblings. Once jsdom has made a node's
 * live childNodes or children list, it rebuilds that list on every change to the node's children,
 * so a recipe that read them and then moved 2,000 lines out of one paragraph did 2,000 rebuilds of
 * 4,000 entries. The recipes and the serialiser never read either list.
 */
export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const COMMENT_NODE = 8;
export const DOCUMENT_NODE = 9;
export const DOCUMENT_TYPE_NODE = 10;

/** node.childNodes, as an array. */
export function childNodesOf(node: Node): ChildNode[] {
  const children: ChildNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) children.push(child);
  return children;
}

/** node.children, as an array. */
export function childElementsOf(node: ParentNode): Element[] {
  const children: Element[] = [];
  for (let child = node.firstElementChild; child !== null; child = child.nextElementSibling) children.push(child);
  return children;
}
