/**
 * Turns fixed HTML into WordPress block-editor (Gutenberg) markup: each top-level element becomes the
 * block that holds it natively (image, heading, list, paragraph, buttons, table, group), anything else
 * a Custom HTML block. Blocks already present in the input are kept as they are.
 */
import { childElementsOf, childNodesOf, classTokens, collapse, firstWithin, isBlank, isElement, isText, tagOf } from './dom.js';
import { COMMENT_NODE, escapeAttribute, Markup } from './markup.js';

type BlockAttributes = Record<string, string | number | boolean>;

/** Block attributes as Gutenberg serialises them: JSON with characters that could end the comment escaped. */
export function serializeBlockAttributes(attrs: BlockAttributes): string {
  if (Object.keys(attrs).length === 0) return '';
  return JSON.stringify(attrs)
    .replace(/--/g, '\\u002d\\u002d')
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\\"/g, '\\u0022');
}

function block(name: string, attrs: BlockAttributes, inner: string): string {
  const json = serializeBlockAttributes(attrs);
  return `<!-- wp:${name}${json === '' ? '' : ` ${json}`} -->${inner}<!-- /wp:${name} -->`;
}

function attributesExcept(el: Element, skip: readonly string[]): string {
  return Array.from(el.attributes)
    .filter((a) => !skip.includes(a.name))
    .map((a) => ` ${a.name}="${escapeAttribute(a.value)}"`)
    .join('');
}

function withClassName(attrs: BlockAttributes, el: Element, drop: readonly string[] = []): BlockAttributes {
  const classes = classTokens(el).filter((c) => !drop.includes(c));
  return classes.length === 0 ? attrs : { ...attrs, className: classes.join(' ') };
}

const INLINE = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'br', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'i', 'ins', 'kbd', 'mark', 'q', 's', 'samp',
  'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr', 'font',
]);
const PHRASING_CONTROLS = new Set(['label', 'input', 'select', 'textarea', 'button', 'output', 'img', 'svg', 'picture', 'meter', 'progress']);
const GROUPS = new Set(['div', 'section', 'article', 'aside', 'header', 'footer', 'main', 'nav']);
const BLOCK_CHILDREN = 'p, h1, h2, h3, h4, h5, h6, ul, ol, figure, img, table, div, section, article, blockquote';

const ownHandler = (el: Element) => Array.from(el.attributes).some((a) => a.name.startsWith('on'));
/** Whether an element's subtree holds a script or an on* handler, remembered: groups nest, and each level asks. */
const handlersBelow = new WeakMap<Element, boolean>();

function scriptedBelow(el: Element): boolean {
  let known = handlersBelow.get(el);
  if (known === undefined) {
    known = childElementsOf(el).some((c) => tagOf(c) === 'script' || ownHandler(c) || scriptedBelow(c));
    handlersBelow.set(el, known);
  }
  return known;
}

/** An on* attribute on the element or in it, or a script in it. */
function hasHandlers(el: Element): boolean {
  return ownHandler(el) || scriptedBelow(el);
}

/** Inline content that a paragraph block can hold as it is. */
function isParagraphSafe(node: Node): boolean {
  if (isText(node)) return true;
  if (!isElement(node)) return false;
  return INLINE.has(tagOf(node)) && !hasHandlers(node) && firstWithin(node, 'input, select, textarea, button, iframe, script, style, label') === null;
}

function isButtonLike(el: Element): boolean {
  return el.getAttribute('role') === 'button' || classTokens(el).some((c) => /^(btn|button|cta)([-_].*)?$/i.test(c));
}

class BlockWriter {
  constructor(private readonly markup: Markup) {}

  private html(node: Node): string {
    return this.markup.outerHtml(node);
  }

  private inner(node: Node): string {
    return this.markup.innerHtml(node);
  }

  private custom(nodes: readonly Node[]): string {
    return block('html', {}, nodes.map((n) => this.html(n)).join(''));
  }

  paragraph(el: Element): string {
    return block('paragraph', withClassName({}, el), this.html(el));
  }

  heading(el: Element): string {
    const level = Number(tagOf(el).slice(1));
    const classes = ['wp-block-heading', ...classTokens(el)].join(' ');
    return block(
      'heading',
      withClassName({ level }, el),
      `<h${level} class="${escapeAttribute(classes)}"${attributesExcept(el, ['class'])}>${this.inner(el)}</h${level}>`,
    );
  }

  list(el: Element): string {
    const ordered = tagOf(el) === 'ol';
    const attrs: BlockAttributes = ordered ? { ordered: true } : {};
    const start = el.getAttribute('start');
    if (ordered && start !== null && /^\d+$/.test(start)) attrs.start = Number(start);
    const items = childElementsOf(el)
      .filter((c) => tagOf(c) === 'li')
      .map((li) => block('list-item', {}, `<li${attributesExcept(li, [])}>${this.listItemContent(li)}</li>`))
      .join('');
    const tag = ordered ? 'ol' : 'ul';
    const startAttr = attrs.start === undefined ? '' : ` start="${attrs.start}"`;
    return block('list', withClassName(attrs, el), `<${tag}${startAttr} class="${['wp-block-list', ...classTokens(el)].join(' ')}">${items}</${tag}>`);
  }

  /** A list item's own content, with nested lists turned into nested list blocks. */
  private listItemContent(li: Element): string {
    return childNodesOf(li)
      .map((n) => (isElement(n) && (tagOf(n) === 'ul' || tagOf(n) === 'ol') ? this.list(n) : this.html(n)))
      .join('');
  }

  image(img: Element, link: Element | null, caption: Element | null): string {
    const alt = img.getAttribute('alt') ?? '';
    const src = img.getAttribute('src') ?? '';
    const tag = `<img src="${escapeAttribute(src)}" alt="${escapeAttribute(alt)}"/>`;
    const linked = link === null ? tag : `<a href="${escapeAttribute(link.getAttribute('href') ?? '')}">${tag}</a>`;
    const figcaption = caption === null ? '' : `<figcaption class="wp-element-caption">${this.inner(caption)}</figcaption>`;
    const attrs: BlockAttributes = link === null ? { alt } : { alt, linkDestination: 'custom' };
    return block('image', attrs, `<figure class="wp-block-image">${linked}${figcaption}</figure>`);
  }

  buttons(el: Element): string | null {
    if (hasHandlers(el)) return null;
    const classes = 'wp-block-button__link wp-element-button';
    let inner: string;
    let attrs: BlockAttributes = {};
    if (tagOf(el) === 'a') {
      inner = `<a class="${classes}"${attributesExcept(el, ['class', 'role'])}>${this.inner(el)}</a>`;
    } else {
      attrs = { tagName: 'button' };
      inner = `<button type="button" class="${classes}"${attributesExcept(el, ['class', 'type'])}>${this.inner(el)}</button>`;
    }
    return block('buttons', {}, `<div class="wp-block-buttons">${block('button', attrs, `<div class="wp-block-button">${inner}</div>`)}</div>`);
  }

  table(el: Element): string {
    return block('table', withClassName({}, el), `<figure class="wp-block-table"><table${attributesExcept(el, ['class'])}>${this.inner(el)}</table></figure>`);
  }

  group(el: Element): string | null {
    const allowed = Array.from(el.attributes).every((a) => a.name === 'class' || a.name === 'id');
    if (!allowed || hasHandlers(el) || !childElementsOf(el).some((c) => c.matches(BLOCK_CHILDREN))) return null;
    const tag = tagOf(el);
    const attrs = withClassName(tag === 'div' ? {} : { tagName: tag }, el);
    const classes = ['wp-block-group', ...classTokens(el)].join(' ');
    const id = el.getAttribute('id');
    const idAttr = id === null ? '' : ` id="${escapeAttribute(id)}"`;
    return block('group', attrs, `<${tag} class="${escapeAttribute(classes)}"${idAttr}>${this.blocks(childNodesOf(el)).join('')}</${tag}>`);
  }

  element(el: Element): string {
    const tag = tagOf(el);
    if (tag === 'p') return this.paragraph(el);
    if (/^h[1-6]$/.test(tag)) return this.heading(el);
    if (tag === 'ul' || tag === 'ol') return this.list(el);
    if (tag === 'img') return this.image(el, null, null);
    if (tag === 'table') return this.table(el);
    if (tag === 'figure') {
      const kids = childElementsOf(el);
      const img = kids.find((k) => tagOf(k) === 'img') ?? null;
      const onlyChild = (k: Element) => (k.firstElementChild !== null && k.firstElementChild === k.lastElementChild ? k.firstElementChild : null);
      const link = kids.find((k) => tagOf(k) === 'a' && onlyChild(k) !== null && tagOf(onlyChild(k)!) === 'img') ?? null;
      const caption = kids.find((k) => tagOf(k) === 'figcaption') ?? null;
      const image = img ?? link?.firstElementChild ?? null;
      if (image !== null && kids.length <= 2) return this.image(image, link, caption);
    }
    if (tag === 'a') {
      const only = el.firstElementChild !== null && el.firstElementChild === el.lastElementChild && collapse(el.textContent ?? '') === '' ? el.firstElementChild : null;
      if (only !== null && tagOf(only) === 'img') return this.image(only, el, null);
      if (isButtonLike(el)) return this.buttons(el) ?? this.custom([el]);
      return block('paragraph', {}, `<p>${this.html(el)}</p>`);
    }
    if (tag === 'button') return this.buttons(el) ?? this.custom([el]);
    if (GROUPS.has(tag)) return this.group(el) ?? this.custom([el]);
    return this.custom([el]);
  }

  /** A block the input already had, kept as it is except that an "alt" in its attributes follows the fixed image. */
  private existingBlock(nodes: readonly Node[]): string {
    const [opener, ...rest] = nodes;
    const html = rest.map((n) => this.html(n)).join('');
    const open = BLOCK_COMMENT.exec((opener as Comment).data);
    const json = open?.[3]?.trim();
    const img = rest.filter(isElement).map((el) => (tagOf(el) === 'img' ? el : firstWithin(el, 'img'))).find((el) => el != null);
    if (open === null || open === undefined || json === undefined || img == null) return this.html(opener!) + html;
    try {
      const attrs = JSON.parse(json) as BlockAttributes;
      if (!('alt' in attrs)) return this.html(opener!) + html;
      return block(open[2]!, { ...attrs, alt: img.getAttribute('alt') ?? '' }, '').replace(/<!-- \/wp:[^>]*-->$/, '') + html;
    } catch {
      return this.html(opener!) + html;
    }
  }

  /** Consecutive inline nodes: one element alone is converted on its own, several make a paragraph. */
  private run(nodes: Node[]): string | null {
    const trimmed = trimBlank(nodes);
    if (trimmed.length === 0) return null;
    if (trimmed.length === 1 && isElement(trimmed[0]!)) return this.element(trimmed[0]);
    if (trimmed.every(isParagraphSafe)) return block('paragraph', {}, `<p>${trimmed.map((n) => this.html(n)).join('').trim()}</p>`);
    return this.custom(trimmed);
  }

  blocks(nodes: readonly Node[]): string[] {
    const out: string[] = [];
    let run: Node[] = [];
    const flush = (): void => {
      const converted = this.run(run);
      if (converted !== null) out.push(converted);
      run = [];
    };
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.nodeType === COMMENT_NODE) {
        flush();
        const end = existingBlockEnd(nodes, i);
        if (end !== null) {
          out.push(this.existingBlock(nodes.slice(i, end + 1)));
          i = end;
        }
        continue;
      }
      if (isText(node) || (isElement(node) && (INLINE.has(tagOf(node)) || PHRASING_CONTROLS.has(tagOf(node))))) {
        run.push(node);
        continue;
      }
      flush();
      if (isElement(node)) out.push(this.element(node));
    }
    flush();
    return out;
  }
}

function trimBlank(nodes: readonly Node[]): Node[] {
  let start = 0;
  let end = nodes.length;
  while (start < end && isBlank(nodes[start]!)) start++;
  while (end > start && isBlank(nodes[end - 1]!)) end--;
  return nodes.slice(start, end);
}

const BLOCK_COMMENT = /^\s*(\/)?wp:([a-z][a-z0-9-]*(?:\/[a-z][a-z0-9-]*)?)(\s+\{[\s\S]*\})?\s*(\/)?\s*$/;

/** Where a block that the input already had ends (its closing comment), or null if `i` opens none. */
function existingBlockEnd(nodes: readonly Node[], i: number): number | null {
  const open = BLOCK_COMMENT.exec((nodes[i] as Comment).data);
  if (open === null || open[1] !== undefined) return null;
  if (open[4] !== undefined) return i; // self-closing block
  let depth = 0;
  for (let j = i; j < nodes.length; j++) {
    const n = nodes[j]!;
    if (n.nodeType !== COMMENT_NODE) continue;
    const m = BLOCK_COMMENT.exec((n as Comment).data);
    if (m === null || m[2] !== open[2]) continue;
    if (m[1] === undefined && m[4] === undefined) depth++;
    else if (m[1] !== undefined && --depth === 0) return j;
  }
  return null;
}

/** The snippet as block-editor markup, blocks separated by blank lines. */
export function toBlockMarkup(html: string): string {
  return Markup.with(html, blocksOf);
}

function blocksOf(markup: Markup): string {
  const doc = markup.document;
  const bodyNodes = childNodesOf(doc.body);
  if (markup.isDocument) return new BlockWriter(markup).blocks(bodyNodes).join('\n\n');
  // The parser puts a fragment's leading comments (such as an opening <!-- wp:... -->) on the document
  // and its leading <meta>/<style> in <head>: gather them back in source order.
  const outside = [...childNodesOf(doc), ...childNodesOf(doc.documentElement), ...childNodesOf(doc.head)].filter(
    (n) => n.nodeType === COMMENT_NODE || (n.parentNode === doc.head && markup.isOriginal(n)),
  );
  const nodes = [...outside, ...bodyNodes].sort((a, b) => (markup.sourceStart(a) ?? Infinity) - (markup.sourceStart(b) ?? Infinity));
  return new BlockWriter(markup).blocks(nodes).join('\n\n');
}

/** Checks that every `<!-- wp:name -->` is closed by `<!-- /wp:name -->` in order; returns the problems found. */
export function blockStructureProblems(blockMarkup: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  for (const m of blockMarkup.matchAll(/<!--\s*(\/)?wp:([a-z][a-z0-9/-]*)(?:\s+\{[\s\S]*?\})?\s*(\/)?-->/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing !== undefined) continue;
    if (closing === undefined) stack.push(name!);
    else if (stack.pop() !== name) problems.push(`unexpected <!-- /wp:${name} --> at ${m.index}`);
  }
  for (const name of stack) problems.push(`<!-- wp:${name} --> is never closed`);
  return problems;
}

