/**
 * Parses an HTML snippet or document with jsdom and serialises it back after recipes changed the DOM.
 *
 * The caller diffs the original against the fix, so serialisation works by editing the original source:
 * untouched nodes keep their exact bytes (quotes, entities, `/>`, whitespace), a changed start tag is
 * patched attribute by attribute, and only new or moved nodes are printed afresh.
 *
 * Where each node sits in the source comes from parse5 (the parser inside jsdom) run on its own, and
 * is laid onto jsdom's tree, which the same parser builds node for node. jsdom's own location
 * tracking (includeNodeLocations) copies a parent's child list for every run of text it inserts:
 * 4,000 lines split by <br> in one paragraph took a minute to parse that way.
 *
 * The snippet becomes a document without a window (DOMParser's), as a browser's DOMParser makes
 * it: nothing in it loads or runs, and an <iframe> gets no window of its own (in a jsdom window's
 * document each one builds a whole window: a thousand of them took gigabytes).
 */
import { JSDOM } from 'jsdom';
import { parse as parseHtml, type DefaultTreeAdapterMap } from 'parse5';

import { childNodesOf, COMMENT_NODE, DOCUMENT_NODE, DOCUMENT_TYPE_NODE, ELEMENT_NODE, TEXT_NODE } from './nodes.js';

export { COMMENT_NODE, DOCUMENT_NODE, DOCUMENT_TYPE_NODE, ELEMENT_NODE, TEXT_NODE } from './nodes.js';

export const HTML_NS = 'http://www.w3.org/1999/xhtml';

const VOID_ELEMENTS = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr',
]);
const RAW_TEXT_ELEMENTS = new Set(['script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);

interface SourceRange {
  readonly start: number;
  readonly end: number;
}

/** What a node looked like right after parsing. */
interface Original {
  readonly children: readonly Node[];
  readonly attributes: ReadonlyArray<readonly [string, string]>;
  readonly data: string | null;
  readonly range: SourceRange | null;
  readonly startTag: SourceRange | null;
  readonly endTag: SourceRange | null;
}

type P5Node = DefaultTreeAdapterMap['node'];
interface P5Range {
  readonly startOffset: number;
  readonly endOffset: number;
}
interface P5Location extends P5Range {
  readonly startTag?: P5Range;
  readonly endTag?: P5Range;
}

/** The jsdom node and the parse5 node are the same kind of node (and element). */
function sameKind(node: Node, p5: P5Node): boolean {
  switch (node.nodeType) {
    case ELEMENT_NODE:
      return 'tagName' in p5 && p5.tagName === (node as Element).localName;
    case TEXT_NODE:
      return p5.nodeName === '#text';
    case COMMENT_NODE:
      return p5.nodeName === '#comment';
    case DOCUMENT_NODE:
      return p5.nodeName === '#document';
    case DOCUMENT_TYPE_NODE:
      return p5.nodeName === '#documentType';
    default:
      return false;
  }
}

/**
 * jsdom's parser puts text that the HTML parser moves out of a table (foster parenting) after the
 * table rather than before it, where parse5 and browsers put it: the node's text children are laid
 * anew as parse5 has them, between the same elements and comments.
 */
function realignText(node: Node, p5Children: readonly P5Node[]): ChildNode[] {
  const others = childNodesOf(node).filter((child) => child.nodeType !== TEXT_NODE);
  const doc = node.ownerDocument ?? (node as Document);
  const laid: ChildNode[] = [];
  let next = 0;
  for (const p5 of p5Children) {
    if (p5.nodeName === '#text') {
      laid.push(doc.createTextNode((p5 as DefaultTreeAdapterMap['textNode']).value));
      continue;
    }
    const other = others[next++];
    if (other === undefined || !sameKind(other, p5)) throw new Error(`internal: parse5 and jsdom built different trees in <${node.nodeName}>`);
    laid.push(other);
  }
  if (next !== others.length) throw new Error(`internal: parse5 and jsdom built different trees in <${node.nodeName}>`);
  (node as ParentNode).replaceChildren(...laid);
  return laid;
}

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

// Table parts are dropped by the parser outside a table, so such snippets get a context prefix.
export function contextPrefix(source: string): string {
  if (/^\s*<(tbody|thead|tfoot|tr|caption|colgroup)\b/i.test(source)) return '<table>';
  if (/^\s*<(td|th)\b/i.test(source)) return '<table><tr>';
  return '';
}

/** True when the snippet is a whole document rather than a fragment. */
export function looksLikeDocument(source: string): boolean {
  return /^\s*(<!--[\s\S]*?-->\s*)*<(!doctype|html[\s>])/i.test(source);
}

/** The one window of this thread that parses snippets (each jsdom window kept about a megabyte after it was dropped). */
let parser: DOMParser | null = null;
const domParser = () => (parser ??= new new JSDOM('').window.DOMParser());

/** A whole document as markup: its doctype, then its root element. */
function documentHtml(doc: Document): string {
  const type = doc.doctype === null ? '' : `<!DOCTYPE ${doc.doctype.name}>`;
  return type + (doc.documentElement?.outerHTML ?? '');
}

export class Markup {
  readonly document: Document;
  readonly isDocument: boolean;
  private readonly originals = new Map<Node, Original>();

  private constructor(readonly source: string) {
    const prefix = contextPrefix(source);
    // The same options jsdom parses with: scripting off, so <noscript> holds markup.
    const located = parseHtml(prefix + source, { sourceCodeLocationInfo: true, scriptingEnabled: false });
    this.document = domParser().parseFromString(prefix + source, 'text/html');
    this.isDocument = looksLikeDocument(source);
    this.record(this.document, located, prefix.length);
  }

  static parse(source: string): Markup {
    return new Markup(source);
  }

  /**
   * Parses `source` for `use` and releases the document afterwards: the parsing window keeps every
   * element with an id (as its named properties) until the element leaves its document.
   */
  static with<T>(source: string, use: (markup: Markup) => T): T {
    const markup = new Markup(source);
    try {
      return use(markup);
    } finally {
      markup.document.documentElement?.remove();
    }
  }

  get body(): HTMLElement {
    return this.document.body;
  }

  /** The fixed markup: the original source with only the changed parts rewritten. */
  serialize(): string {
    try {
      return this.applyEdits(0, this.source.length, this.diff(this.document));
    } catch {
      // Should a recipe produce edits that cannot be laid over the source, fall back to plain serialisation.
      return this.isDocument ? documentHtml(this.document) : this.innerHtml(this.document.head) + this.innerHtml(this.document.body);
    }
  }

  /** The current markup of one node, keeping original bytes wherever the node is unchanged. */
  outerHtml(node: Node): string {
    return this.render(node);
  }

  innerHtml(node: Node): string {
    return childNodesOf(node).map((c) => this.render(c)).join('');
  }

  /** Whether the node came from the source (as opposed to being created by a recipe). */
  isOriginal(node: Node): boolean {
    return this.originals.has(node);
  }

  /** Where the node starts in the source, or null for created or implied nodes. */
  sourceStart(node: Node): number | null {
    return this.startOf(node);
  }

  /** Records every node's original state, with its place in the source from the parse5 node built for it. */
  private record(root: Node, located: P5Node, shift: number): void {
    const range = (r: P5Range | undefined | null): SourceRange | null =>
      r === undefined || r === null || r.startOffset < shift ? null : { start: r.startOffset - shift, end: r.endOffset - shift };
    // Iterative: a deep snippet must not overflow the stack.
    const pending: Array<[Node, P5Node]> = [[root, located]];
    while (pending.length > 0) {
      const [node, p5] = pending.pop()!;
      const p5Children = 'childNodes' in p5 ? p5.childNodes : [];
      if (!sameKind(node, p5)) throw new Error(`internal: parse5 and jsdom built different trees at <${node.nodeName}>`);
      let children = childNodesOf(node);
      if (children.length !== p5Children.length || children.some((child, i) => !sameKind(child, p5Children[i]!))) children = realignText(node, p5Children);
      const el = node.nodeType === ELEMENT_NODE ? (node as Element) : null;
      const loc = node.nodeType === DOCUMENT_NODE ? null : (p5 as { sourceCodeLocation?: P5Location | null }).sourceCodeLocation;
      this.originals.set(node, {
        children,
        attributes: el === null ? [] : Array.from(el.attributes, (a) => [a.name, a.value] as const),
        data: node.nodeType === TEXT_NODE || node.nodeType === COMMENT_NODE ? (node as CharacterData).data : null,
        range: range(loc),
        startTag: range(loc?.startTag),
        endTag: range(loc?.endTag),
      });
      children.forEach((child, i) => pending.push([child, p5Children[i]!]));
    }
  }

  // ---- positions -------------------------------------------------------------------------

  private startOf(node: Node): number | null {
    const own = this.originals.get(node)?.range;
    if (own) return own.start;
    for (const child of this.originals.get(node)?.children ?? []) {
      const s = this.startOf(child);
      if (s !== null) return s;
    }
    return null;
  }

  private endOf(node: Node): number | null {
    const own = this.originals.get(node)?.range;
    if (own) return own.end;
    const children = this.originals.get(node)?.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) {
      const e = this.endOf(children[i]!);
      if (e !== null) return e;
    }
    return null;
  }

  /** Where content inside `parent` begins when it has no located children left to anchor on. */
  private innerStart(parent: Node): number {
    const rec = this.originals.get(parent);
    if (parent.nodeType === DOCUMENT_NODE) return 0;
    if (rec?.startTag) return rec.startTag.end;
    const s = this.startOf(parent);
    if (s !== null) return s;
    // An implied, empty element (such as <head> in a fragment): place it where its next sibling begins.
    const parentOfParent = parent.parentNode;
    if (parentOfParent === null) return 0;
    const siblings = this.originals.get(parentOfParent)?.children ?? [];
    const at = siblings.indexOf(parent);
    for (let i = at + 1; i < siblings.length; i++) {
      const next = this.startOf(siblings[i]!);
      if (next !== null) return next;
    }
    return this.innerStart(parentOfParent);
  }

  private innerEnd(parent: Node): number {
    const rec = this.originals.get(parent);
    if (parent.nodeType === DOCUMENT_NODE) return this.source.length;
    if (rec?.endTag) return rec.endTag.start;
    return this.endOf(parent) ?? this.innerStart(parent);
  }

  /** An original node that still sits on located source, so edits can be made around it. */
  private isAnchored(node: Node): boolean {
    return this.originals.has(node) && this.startOf(node) !== null;
  }

  // ---- diffing ---------------------------------------------------------------------------

  private diff(node: Node): Edit[] {
    const rec = this.originals.get(node)!;
    if (node.nodeType === TEXT_NODE || node.nodeType === COMMENT_NODE) {
      const data = (node as CharacterData).data;
      if (data === rec.data || rec.range === null) return [];
      return [{ ...rec.range, text: this.render(node) }];
    }
    const edits: Edit[] = [];
    if (node.nodeType === ELEMENT_NODE) {
      const el = node as Element;
      const now = Array.from(el.attributes, (a) => [a.name, a.value] as const);
      if (!sameAttributes(rec.attributes, now)) {
        if (rec.startTag) {
          const tag = this.source.slice(rec.startTag.start, rec.startTag.end);
          edits.push({ ...rec.startTag, text: patchStartTag(tag, rec.attributes, now) });
        } else {
          // An implied element (usually <html> in a fragment) gains a real start tag.
          const at = this.startOf(el) ?? this.innerStart(el);
          edits.push({ start: at, end: at, text: openTag(el) });
        }
      }
    }
    return edits.concat(this.diffChildren(node, rec));
  }

  private diffChildren(parent: Node, rec: Original): Edit[] {
    const old = rec.children;
    const now: Node[] = childNodesOf(parent);
    const oldIndex = new Map(old.map((n, i) => [n, i] as const));
    const kept = (n: Node): boolean => oldIndex.has(n) && this.isAnchored(n);
    const keptOrder = now.filter(kept).map((n) => oldIndex.get(n)!);
    if (keptOrder.some((v, i) => i > 0 && v <= keptOrder[i - 1]!)) {
      // Reordered children: print the whole content of the parent afresh.
      return [{ start: this.innerStart(parent), end: this.innerEnd(parent), text: this.innerHtml(parent) }];
    }
    const nowSet = new Set(now);
    const removed = new Set(old.filter((n) => !nowSet.has(n)));
    const edits: Edit[] = [];
    for (const gone of removed) {
      const start = this.startOf(gone);
      const end = this.endOf(gone);
      if (start !== null && end !== null) edits.push({ start, end, text: '' });
    }
    let run: Node[] = [];
    let previous: Node | null = null;
    const flush = (next: Node | null): void => {
      if (run.length === 0) return;
      const at = this.anchor(parent, old, oldIndex, removed, previous, next);
      edits.push({ start: at, end: at, text: run.map((n) => this.render(n)).join('') });
      run = [];
    };
    for (const child of now) {
      if (kept(child)) {
        flush(child);
        edits.push(...this.diff(child));
        previous = child;
      } else {
        run.push(child);
      }
    }
    flush(null);
    return edits;
  }

  /** Where a run of new nodes between two kept siblings goes: where the nodes it replaces were, if any. */
  private anchor(
    parent: Node,
    old: readonly Node[],
    oldIndex: ReadonlyMap<Node, number>,
    removed: ReadonlySet<Node>,
    previous: Node | null,
    next: Node | null,
  ): number {
    const from = previous === null ? 0 : oldIndex.get(previous)! + 1;
    const to = next === null ? old.length : oldIndex.get(next)!;
    for (let i = from; i < to; i++) {
      const candidate = old[i]!;
      const s = removed.has(candidate) ? this.startOf(candidate) : null;
      if (s !== null) return s;
    }
    const afterPrevious = previous === null ? null : this.endOf(previous);
    if (afterPrevious !== null) return afterPrevious;
    const beforeNext = next === null ? null : this.startOf(next);
    if (beforeNext !== null) return beforeNext;
    return this.innerStart(parent);
  }

  // ---- rendering -------------------------------------------------------------------------

  private render(node: Node): string {
    const rec = this.originals.get(node);
    switch (node.nodeType) {
      case TEXT_NODE: {
        const data = (node as Text).data;
        if (rec?.range && rec.data === data) {
          const slice = this.source.slice(rec.range.start, rec.range.end);
          // The parser can merge text across end tags; such a slice is not the text itself.
          if (slice === data || !slice.includes('<')) return slice;
        }
        const parentName = node.parentNode?.nodeName.toLowerCase() ?? '';
        return RAW_TEXT_ELEMENTS.has(parentName) ? data : escapeText(data);
      }
      case COMMENT_NODE: {
        const data = (node as Comment).data;
        if (rec?.range && rec.data === data) return this.source.slice(rec.range.start, rec.range.end);
        return `<!--${data}-->`;
      }
      case DOCUMENT_TYPE_NODE:
        if (rec?.range) return this.source.slice(rec.range.start, rec.range.end);
        return `<!DOCTYPE ${(node as DocumentType).name}>`;
      case ELEMENT_NODE: {
        if (rec?.range) return this.applyEdits(rec.range.start, rec.range.end, this.diff(node));
        const el = node as Element;
        // Implied elements (the <head> and <body> the parser adds around a fragment) print only once they hold something.
        if (rec !== undefined && el.firstChild === null && sameAttributes(rec.attributes, Array.from(el.attributes, (a) => [a.name, a.value] as const))) return '';
        const name = el.localName;
        const inner = this.innerHtml(el);
        return VOID_ELEMENTS.has(name) && el.namespaceURI === HTML_NS ? openTag(el) : `${openTag(el)}${inner}</${name}>`;
      }
      default:
        return this.innerHtml(node);
    }
  }

  private applyEdits(from: number, to: number, edits: readonly Edit[]): string {
    // Stable sort: insertions at the same offset keep the order the recipe produced them in.
    const sorted = edits
      .map((e, i) => ({ e, i }))
      .sort((a, b) => a.e.start - b.e.start || a.e.end - a.e.start - (b.e.end - b.e.start) || a.i - b.i)
      .map(({ e }) => e);
    let out = '';
    let cursor = from;
    for (const edit of sorted) {
      if (edit.start < cursor || edit.end > to) throw new Error('internal: overlapping markup edits');
      out += this.source.slice(cursor, edit.start) + edit.text;
      cursor = edit.end;
    }
    return out + this.source.slice(cursor, to);
  }
}

function sameAttributes(a: ReadonlyArray<readonly [string, string]>, b: ReadonlyArray<readonly [string, string]>): boolean {
  if (a.length !== b.length) return false;
  const map = new Map(b);
  return a.every(([name, value]) => map.get(name) === value);
}

export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;');
}

export function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/\u00a0/g, '&nbsp;');
}

function attributeText(name: string, value: string): string {
  return `${name}="${escapeAttribute(value)}"`;
}

export function openTag(el: Element): string {
  const attrs = Array.from(el.attributes, (a) => ` ${attributeText(a.name, a.value)}`).join('');
  return `<${el.localName}${attrs}>`;
}

interface AttributeToken {
  readonly name: string;
  /** Start of the whitespace before the attribute, so removing it leaves no double space. */
  readonly leading: number;
  readonly start: number;
  readonly end: number;
}

/** Finds the attributes in a start tag's source text, with their positions. */
function scanAttributes(tag: string): { tokens: AttributeToken[]; insertAt: number } {
  const tokens: AttributeToken[] = [];
  const nameMatch = /^<[^\s/>]+/.exec(tag);
  let i = nameMatch ? nameMatch[0].length : 1;
  let insertAt = i;
  const isSpace = (ch: string | undefined): boolean => ch !== undefined && /[\s/]/.test(ch);
  while (i < tag.length) {
    const leading = i;
    while (isSpace(tag[i])) i++;
    if (i >= tag.length || tag[i] === '>') break;
    const start = i;
    i++; // the first character may be '='
    while (i < tag.length && !/[\s/>=]/.test(tag[i]!)) i++;
    const name = tag.slice(start, i).toLowerCase();
    let j = i;
    while (j < tag.length && /\s/.test(tag[j]!)) j++;
    if (tag[j] === '=') {
      j++;
      while (j < tag.length && /\s/.test(tag[j]!)) j++;
      const quote = tag[j];
      if (quote === '"' || quote === "'") {
        const close = tag.indexOf(quote, j + 1);
        j = close === -1 ? tag.length : close + 1;
      } else {
        while (j < tag.length && !/[\s>]/.test(tag[j]!)) j++;
      }
      i = j;
    }
    tokens.push({ name, leading, start, end: i });
    insertAt = i;
  }
  return { tokens, insertAt };
}

/** Rewrites only the attributes that changed in an original start tag. */
export function patchStartTag(
  tag: string,
  before: ReadonlyArray<readonly [string, string]>,
  after: ReadonlyArray<readonly [string, string]>,
): string {
  const { tokens, insertAt } = scanAttributes(tag);
  const afterMap = new Map(after);
  const beforeMap = new Map(before);
  const edits: Edit[] = [];
  for (const [name, value] of before) {
    const token = tokens.find((t) => t.name === name.toLowerCase());
    if (token === undefined) continue;
    if (!afterMap.has(name)) edits.push({ start: token.leading, end: token.end, text: '' });
    else if (afterMap.get(name) !== value) edits.push({ start: token.start, end: token.end, text: attributeText(name, afterMap.get(name)!) });
  }
  const added = after.filter(([name]) => !beforeMap.has(name)).map(([n, v]) => ` ${attributeText(n, v)}`).join('');
  if (added !== '') edits.push({ start: insertAt, end: insertAt, text: added });
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const e of edits) {
    out += tag.slice(cursor, e.start) + e.text;
    cursor = e.end;
  }
  return out + tag.slice(cursor);
}
