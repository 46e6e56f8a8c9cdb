/**
 * 1.3.1 Info and Relationships: structure that is only visual becomes structure in the markup.
 * Bold or large text used as a heading becomes a heading element, marker-prefixed lines become lists,
 * data tables get header cells, and text next to a field becomes its <label>.
 */
import {
  childElementsOf,
  childNodesOf,
  classTokens,
  closestWhere,
  collapse,
  contentText,
  containsInteractive,
  elementsOf,
  firstWithin,
  isBlank,
  isElement,
  isText,
  meaningfulChildren,
  plural,
  quote,
  retag,
  roleOf,
  tagIn,
  tagOf,
} from '../dom.js';
import { draftWithFixers, fixersFor, type Finding, type Fixer } from '../drafting.js';
import { adjacentLabelSource, ensureFieldId, formFields, hasProgrammaticLabel, wrapAsLabel } from '../form-labels.js';
import type { Markup } from '../markup.js';
import type { FixInput, FixResult, Recipe } from '../model.js';

// ---- headings -----------------------------------------------------------------------------

// Class words (split on - and _) that name a heading: "section-title", "card_heading", "h3".
const HEADING_CLASS = /^(heading|headline|title|subtitle|subheading|h[1-6])$/i;
const NOT_INSIDE_TAGS = tagIn('h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'td', 'th', 'caption', 'label', 'button', 'a', 'summary', 'legend', 'figcaption', 'dt', 'nav', 'table');
/** Where a fake heading cannot be: inside a heading, a list item, a cell, a label, a control... */
const notInside = (el: Element) => NOT_INSIDE_TAGS(el) || el.getAttribute('role') === 'heading';
const inPhrase = tagIn('p', 'span', 'label');
const inListOrPre = tagIn('ul', 'ol', 'pre');
const inListPreOrTable = tagIn('ul', 'ol', 'pre', 'table');
const BLOCK_CONTENT = 'p, div, ul, ol, table, h1, h2, h3, h4, h5, h6, section, article, form, blockquote, figure, img, input, select, textarea';
const HEADINGS = 'h1, h2, h3, h4, h5, h6';
const MAX_HEADING_CHARS = 120;
const MAX_HEADING_WORDS = 15;

function headingClassLevel(el: Element): { isHeading: boolean; level: number | null; sub: boolean } {
  const words = classTokens(el).flatMap((c) => c.split(/[-_]/));
  const explicit = words.map((w) => /^h([1-6])$/i.exec(w)).find((m) => m !== null);
  const joined = classTokens(el).join(' ');
  const isHeading = words.some((w) => HEADING_CLASS.test(w));
  return {
    isHeading,
    level: explicit ? Number(explicit[1]) : null,
    sub: /sub-?(title|heading|headline)/i.test(joined),
  };
}

function styleLooksLikeHeading(style: string): boolean {
  const weight = /font-weight\s*:\s*(bold|bolder|[6-9]00)\b/i.test(style);
  const size = /font-size\s*:\s*([\d.]+)(px|em|rem|pt|%)|font-size\s*:\s*(larger|x-large|xx-large|xxx-large)/i.exec(style);
  let large = false;
  if (size !== null) {
    if (size[3] !== undefined) large = true;
    else {
      const n = Number(size[1]);
      const unit = size[2]!.toLowerCase();
      large = unit === 'px' ? n >= 20 : unit === 'pt' ? n >= 15 : unit === '%' ? n >= 125 : n >= 1.25;
    }
  }
  return weight || large;
}

function readsLikeHeading(el: Element): boolean {
  const text = collapse(contentText(el));
  if (text === '' || text.length > MAX_HEADING_CHARS || text.split(' ').length > MAX_HEADING_WORDS) return false;
  if (/[.,;]$/.test(text)) return false;
  if (firstWithin(el, BLOCK_CONTENT) !== null || containsInteractive(el)) return false;
  const last = meaningfulChildren(el).at(-1);
  return elementsOf(el, 'br').every((br) => last === br || br.nextSibling === null);
}

/** The single bold element a paragraph's whole text sits in, if that is how the heading is faked. */
function emphasisWrapper(el: Element): Element | null {
  const children = meaningfulChildren(el).filter((n) => !(isElement(n) && tagOf(n) === 'br'));
  if (children.length !== 1 || !isElement(children[0]!)) return null;
  const only = children[0];
  const tag = tagOf(only);
  if (tag === 'b' || tag === 'strong') return only;
  if ((tag === 'span' || tag === 'font') && styleLooksLikeHeading(only.getAttribute('style') ?? '')) return only;
  if (tag === 'font' && /^[4-7]$|^\+[1-4]$/.test(only.getAttribute('size') ?? '')) return only;
  return null;
}

interface FakeHeading {
  readonly el: Element;
  readonly unwrap: Element | null;
  readonly classHint: ReturnType<typeof headingClassLevel>;
}

function findFakeHeadings(doc: Document): FakeHeading[] {
  const found: FakeHeading[] = [];
  const taken = new Set<Element>();
  const insideTaken = (el: Element): boolean => {
    for (let cur: Element | null = el; cur !== null; cur = cur.parentElement) if (taken.has(cur)) return true;
    return false;
  };
  for (const el of elementsOf(doc, 'p, div, span')) {
    if (roleOf(el) !== '' || closestWhere(el.parentElement, notInside) !== null) continue;
    if (insideTaken(el)) continue;
    const tag = tagOf(el);
    const classHint = headingClassLevel(el);
    if (tag === 'span' && (!classHint.isHeading || closestWhere(el.parentElement, inPhrase) !== null)) continue;
    if (!readsLikeHeading(el)) continue;
    const unwrap = tag === 'span' ? null : emphasisWrapper(el);
    const styled = tag !== 'span' && styleLooksLikeHeading(el.getAttribute('style') ?? '');
    if (classHint.isHeading || unwrap !== null || styled) {
      found.push({ el, unwrap, classHint });
      taken.add(el);
    }
  }
  return found;
}

/** For each of `els`, the last real heading before it in document order (one pass over the document). */
function headingsBefore(doc: Document, els: readonly Element[]): Map<Element, Element | undefined> {
  const wanted = new Set(els);
  const before = new Map<Element, Element | undefined>();
  let last: Element | undefined;
  for (const el of elementsOf(doc, '*')) {
    if (wanted.has(el)) before.set(el, last);
    if (el.matches(HEADINGS)) last = el;
  }
  return before;
}

/** h2, unless a class names the level or a real heading before it makes this a sub-section. */
function headingLevel(fake: FakeHeading, previous: Element | undefined): number {
  if (fake.classHint.level !== null) return fake.classHint.level;
  const base = previous === undefined ? 2 : Math.min(Number(tagOf(previous).slice(1)) + 1, 6);
  return fake.classHint.sub && previous === undefined ? 3 : base;
}

/** <p><b>Opening hours</b><br>Mon–Fri 9–5</p>: a bold lead line that introduces the rest. */
function findLeadLines(doc: Document): Array<{ p: Element; lead: Element; br: Element }> {
  const found: Array<{ p: Element; lead: Element; br: Element }> = [];
  for (const p of elementsOf(doc, 'p, div')) {
    if (closestWhere(p, notInside) !== null) continue;
    const kids = meaningfulChildren(p);
    const [lead, br] = kids;
    if (kids.length < 3 || !isElement(lead!) || !isElement(br!)) continue;
    if (!['b', 'strong'].includes(tagOf(lead)) || tagOf(br) !== 'br') continue;
    const text = collapse(contentText(lead));
    if (text === '' || text.length > MAX_HEADING_CHARS || /[.,;]$/.test(text) || firstWithin(lead, BLOCK_CONTENT) !== null) continue;
    found.push({ p, lead, br });
  }
  return found;
}

function fixFakeHeadings(markup: Markup): Finding | null {
  const doc = markup.document;
  const fakes = findFakeHeadings(doc);
  const leads = findLeadLines(doc).filter((l) => !fakes.some((f) => f.el === l.p));
  if (fakes.length === 0 && leads.length === 0) return null;
  // Levels are decided before any change, so converted siblings do not nest under each other.
  const previous = headingsBefore(doc, [...fakes.map((f) => f.el), ...leads.map((l) => l.p)]);
  const levels = fakes.map((f) => headingLevel(f, previous.get(f.el)));
  const leadLevels = leads.map((l) => headingLevel({ el: l.p, unwrap: null, classHint: headingClassLevel(l.p) }, previous.get(l.p)));
  const texts: string[] = [];
  fakes.forEach((fake, i) => {
    const heading = retag(fake.el, `h${levels[i]}`, (name) => name !== 'role' && name !== 'aria-level');
    if (fake.unwrap !== null) fake.unwrap.replaceWith(...childNodesOf(fake.unwrap));
    const last = heading.lastChild;
    if (isElement(last) && tagOf(last) === 'br') last.remove();
    texts.push(collapse(heading.textContent ?? ''));
  });
  leads.forEach(({ p, lead, br }, i) => {
    const heading = doc.createElement(`h${leadLevels[i]}`);
    heading.append(...childNodesOf(lead));
    while (p.firstChild !== null && p.firstChild !== br) p.firstChild.remove();
    br.remove();
    while (p.firstChild !== null && isBlank(p.firstChild)) p.firstChild.remove();
    p.before(heading);
    texts.push(collapse(heading.textContent ?? ''));
  });
  const levelsUsed = Array.from(new Set([...levels, ...leadLevels])).sort().map((l) => `<h${l}>`).join('/');
  return {
    count: texts.length,
    headline: `${plural(texts.length, 'fake heading')} turned into ${levelsUsed}`,
    restructured: true,
    summary:
      texts.length === 1
        ? `The text ${quote(texts[0]!)} only looked like a heading (bold, large or classed as a title), so assistive technology could not navigate by it: it is now a real ${levelsUsed} element`
        : `${plural(texts.length, 'piece')} of text (${texts.slice(0, 3).map((t) => quote(t, 30)).join(', ')}${texts.length > 3 ? ', …' : ''}) only looked like headings, so assistive technology could not navigate by them: they are now real ${levelsUsed} elements`,
    check: `Check that the heading level fits the page outline (no skipped levels) and that the heading styles still match the design.`,
    placeholders: [],
  };
}

// ---- lists --------------------------------------------------------------------------------

// Typographic bullets may touch the text ("•Item"); ASCII ones need a space so "-5" stays a number.
const BULLET = /^(\s*)(?:[•·◦▪▫‣⁃●○■□►▸➢➤✓✔]\s*|[–—*-]\s+)/u;
const NUMBER = /^(\s*)(\d{1,3})[.)]\s+/;

interface Marker {
  readonly ordered: boolean;
  readonly number: number;
}

function markerOf(text: string): Marker | null {
  const n = NUMBER.exec(text);
  if (n !== null) return { ordered: true, number: Number(n[2]) };
  return BULLET.test(text) ? { ordered: false, number: 0 } : null;
}

/** Lines belong to one list when all are bullets, or numbers counting up by one. */
function sameList(markers: readonly Marker[]): boolean {
  if (markers.length < 2) return false;
  if (markers.every((m) => !m.ordered)) return true;
  return markers.every((m, i) => m.ordered && (i === 0 || m.number === markers[i - 1]!.number + 1));
}

/** Whether `m` continues a list of `markers` (one or more): a bullet after bullets, or the next number. */
function continuesList(markers: readonly Marker[], m: Marker): boolean {
  const last = markers[markers.length - 1]!;
  return markers[0]!.ordered ? m.ordered && m.number === last.number + 1 : !m.ordered;
}

function textOfNodes(nodes: readonly Node[]): string {
  return nodes.map((n) => contentText(n)).join('');
}

/** Removes the marker from the first text of an item and trims the item's edges. */
function stripMarker(item: Element): void {
  while (item.firstChild !== null && isBlank(item.firstChild)) item.firstChild.remove();
  while (item.lastChild !== null && isBlank(item.lastChild)) item.lastChild.remove();
  const walker = item.ownerDocument.createTreeWalker(item, 4 /* SHOW_TEXT */);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const text = node as Text;
    if (text.data.trim() === '') continue;
    text.data = text.data.replace(NUMBER, '').replace(BULLET, '');
    break;
  }
  const last = item.lastChild;
  if (isText(last) && /\s$/.test(last.data)) last.data = last.data.replace(/\s+$/, '');
}

function buildList(doc: Document, markers: readonly Marker[], items: readonly Node[][], gaps: readonly Node[][] = []): Element {
  const ordered = markers[0]!.ordered;
  const list = doc.createElement(ordered ? 'ol' : 'ul');
  if (ordered && markers[0]!.number !== 1) list.setAttribute('start', String(markers[0]!.number));
  items.forEach((nodes, i) => {
    if (i > 0) list.append(...(gaps[i - 1] ?? []));
    const li = doc.createElement('li');
    li.append(...nodes);
    stripMarker(li);
    list.appendChild(li);
  });
  return list;
}

const LINE_CONTAINERS = 'p, div, td, th, dd, li';
const SIBLING_ITEMS = new Set(['p', 'div']);

/** Consecutive <p> (or <div>) siblings that each start with a marker. */
function fixSiblingRuns(doc: Document): number {
  let lists = 0;
  for (const parent of [doc.body, ...elementsOf(doc.body, '*')]) {
    if (closestWhere(parent, inListPreOrTable) !== null && tagOf(parent) !== 'td') continue;
    const kids = childElementsOf(parent);
    let i = 0;
    while (i < kids.length) {
      const run: Element[] = [];
      const markers: Marker[] = [];
      let j = i;
      while (j < kids.length) {
        const el = kids[j]!;
        const m = SIBLING_ITEMS.has(tagOf(el)) && firstWithin(el, BLOCK_CONTENT) === null ? markerOf(contentText(el)) : null;
        if (m === null || (run.length > 0 && tagOf(el) !== tagOf(run[0]!))) break;
        if (run.length > 0 && !continuesList(markers, m)) break;
        run.push(el);
        markers.push(m);
        j++;
      }
      const adjacent = run.every((el, k) => k === 0 || el.previousElementSibling === run[k - 1]);
      if (run.length >= 2 && adjacent && sameList(markers)) {
        const gaps = run.slice(1).map((el, k) => {
          const between: Node[] = [];
          for (let n = el.previousSibling; n !== null && n !== run[k]; n = n.previousSibling) between.push(n);
          return between.reverse().filter((n) => isBlank(n));
        });
        const list = buildList(doc, markers, run.map((el) => childNodesOf(el)), gaps);
        run[0]!.before(list);
        run.forEach((el) => el.remove());
        lists++;
        i = j;
      } else {
        i = Math.max(j, i + 1);
      }
    }
  }
  return lists;
}

/** Splits a container's children into the lines its <br> elements make. */
function linesOf(container: Element): { lines: Node[][]; breaks: Element[] } {
  const lines: Node[][] = [[]];
  const breaks: Element[] = [];
  for (const node of childNodesOf(container)) {
    if (isElement(node) && tagOf(node) === 'br') {
      breaks.push(node);
      lines.push([]);
    } else {
      lines[lines.length - 1]!.push(node);
    }
  }
  return { lines, breaks };
}

/** "• one<br>• two<br>• three" inside one paragraph or cell. */
function fixBrLines(doc: Document): number {
  let lists = 0;
  for (const container of elementsOf(doc, LINE_CONTAINERS)) {
    if (firstWithin(container, BLOCK_CONTENT) !== null || closestWhere(container, inListOrPre) !== null) continue;
    const { lines, breaks } = linesOf(container);
    if (breaks.length === 0) continue;
    const markers = lines.map((l) => markerOf(textOfNodes(l)));
    const first = markers.findIndex((m) => m !== null);
    if (first === -1) continue;
    let last = first;
    while (last + 1 < markers.length && markers[last + 1] !== null) last++;
    const listMarkers = markers.slice(first, last + 1) as Marker[];
    // Every marked line must be in the one run, and the run must read as one list.
    if (markers.slice(last + 1).some((m) => m !== null) || !sameList(listMarkers)) continue;
    const intro = lines.slice(0, first).flat();
    const outro = lines.slice(last + 1).flat();
    const items = lines.slice(first, last + 1);
    breaks.forEach((br) => br.remove());
    const list = buildList(doc, listMarkers, items);
    const hasText = (nodes: Node[]): boolean => collapse(textOfNodes(nodes)) !== '' || nodes.some((n) => isElement(n));
    if (tagOf(container) === 'p') {
      // A list cannot sit inside a paragraph: the paragraph keeps the intro, the rest follows it.
      if (hasText(intro)) {
        while (container.lastChild !== null && isBlank(container.lastChild)) container.lastChild.remove();
        container.after(list);
        if (hasText(outro)) {
          const rest = doc.createElement(tagOf(container));
          rest.append(...outro.filter((n) => n.parentNode === container));
          stripEdges(rest);
          list.after(rest);
        }
      } else if (hasText(outro)) {
        container.before(list);
        stripEdges(container);
      } else {
        container.replaceWith(list);
      }
    } else {
      const anchor = outro.find((n) => n.parentNode === container) ?? null;
      container.insertBefore(list, anchor);
    }
    lists++;
  }
  return lists;
}

function stripEdges(el: Element): void {
  while (el.firstChild !== null && isBlank(el.firstChild)) el.firstChild.remove();
  while (el.lastChild !== null && isBlank(el.lastChild)) el.lastChild.remove();
}

/**
 * Real lists with the wrong children (axe "list"): <div>/<p>/<span> children become <li>,
 * anything else is wrapped in one. Orphan <li> elements (axe "listitem") get a <ul> around them.
 */
function fixMalformedLists(markup: Markup): Finding | null {
  const doc = markup.document;
  let fixed = 0;
  for (const list of elementsOf(doc, 'ul, ol')) {
    if (roleOf(list) !== '') continue;
    const strays = childNodesOf(list).filter(
      (n) => (isElement(n) && !['li', 'script', 'template'].includes(tagOf(n))) || (isText(n) && n.data.trim() !== ''),
    );
    for (const stray of strays) {
      if (isElement(stray) && ['div', 'p', 'span'].includes(tagOf(stray)) && roleOf(stray) === '') {
        retag(stray, 'li');
      } else {
        const li = doc.createElement('li');
        stray.replaceWith(li);
        li.appendChild(stray);
      }
    }
    if (strays.length > 0) fixed++;
  }
  const orphans = elementsOf(doc, 'li').filter((li) => {
    const parent = li.parentElement;
    return parent !== null && !['ul', 'ol', 'menu'].includes(tagOf(parent)) && !['list', 'directory'].includes(roleOf(parent));
  });
  const done = new Set<Element>();
  const orphaned = new Set(orphans);
  for (const li of orphans) {
    if (done.has(li)) continue;
    // Consecutive orphan items (whitespace between them allowed) share one list.
    const run: Node[] = [li];
    for (let n = li.nextSibling; n !== null && (isBlank(n) || (isElement(n) && orphaned.has(n))); n = n.nextSibling) run.push(n);
    while (run.length > 0 && isBlank(run[run.length - 1]!)) run.pop();
    const ul = doc.createElement('ul');
    li.before(ul);
    ul.append(...run);
    run.filter(isElement).forEach((el) => done.add(el));
    fixed++;
  }
  if (fixed === 0) return null;
  return {
    count: fixed,
    headline: `${plural(fixed, 'malformed list')} repaired`,
    restructured: true,
    summary: `${fixed === 1 ? 'A list was' : `${fixed} lists were`} built incorrectly (items outside a list, or a list holding other elements), so its items were not announced as one list: every item is now an <li> directly inside a <ul> or <ol>`,
    check: 'Check the list styling against the design.',
    placeholders: [],
  };
}

function fixFakeLists(markup: Markup): Finding | null {
  const lists = fixSiblingRuns(markup.document) + fixBrLines(markup.document);
  if (lists === 0) return null;
  return {
    count: lists,
    headline: `${plural(lists, 'fake list')} turned into ${lists === 1 ? 'a real list' : 'real lists'}`,
    restructured: true,
    summary: `${lists === 1 ? 'A list was' : `${lists} lists were`} written as lines starting with bullet characters or numbers, so screen readers could not announce it as a list: the lines are now <li> items of a real list, with the typed markers removed`,
    check: 'Check the list styling (bullets, numbering, spacing) against the design.',
    placeholders: [],
  };
}

// ---- data tables --------------------------------------------------------------------------

function fixDataTables(markup: Markup): Finding | null {
  let fixed = 0;
  let rowHeaders = false;
  for (const table of elementsOf(markup.document, 'table') as HTMLTableElement[]) {
    const role = roleOf(table);
    if (role === 'presentation' || role === 'none') continue;
    if (firstWithin(table, 'th, [role="columnheader"], [role="rowheader"], table') !== null) continue;
    const rows = Array.from(table.rows);
    if (rows.length < 2 || rows[0]!.cells.length < 2) continue;
    const firstRow = Array.from(rows[0]!.cells);
    const corner = collapse(contentText(firstRow[0]!)) === '';
    firstRow.forEach((cell, i) => {
      if (i === 0 && corner) return;
      toHeaderCell(cell, 'col');
    });
    if (corner) {
      rowHeaders = true;
      for (const row of rows.slice(1)) {
        const cell = row.cells[0];
        if (cell !== undefined && collapse(contentText(cell)) !== '') toHeaderCell(cell, 'row');
      }
    }
    fixed++;
  }
  if (fixed === 0) return null;
  return {
    count: fixed,
    headline: `header cells for ${plural(fixed, 'data table')}`,
    restructured: true,
    summary: `${fixed === 1 ? 'A data table had' : `${fixed} data tables had`} no header cells, so cells could not be announced with their column${rowHeaders ? ' and row' : ''}: the first row's cells are now <th scope="col">${rowHeaders ? ', and the first column\'s <th scope="row">' : ''}`,
    check: 'Confirm that the first row really holds the column headings; a table used only for layout should get role="presentation" instead.',
    placeholders: [],
  };
}

function toHeaderCell(cell: Element, scope: 'col' | 'row'): void {
  const th = retag(cell, 'th');
  th.setAttribute('scope', scope);
  // <td><b>Name</b></td>: a header cell is bold already.
  const kids = meaningfulChildren(th);
  if (kids.length === 1 && isElement(kids[0]!) && ['b', 'strong'].includes(tagOf(kids[0]))) {
    const bold = kids[0];
    bold.replaceWith(...childNodesOf(bold));
  }
}

// ---- labels -------------------------------------------------------------------------------

function fixAdjacentLabels(markup: Markup): Finding | null {
  const texts: string[] = [];
  for (const field of formFields(markup.document)) {
    if (hasProgrammaticLabel(field) || (field.getAttribute('aria-label') ?? '').trim() !== '') continue;
    const source = adjacentLabelSource(field);
    if (source === null) continue;
    const text = collapse(contentText(source));
    wrapAsLabel(source, ensureFieldId(field, text));
    texts.push(text);
  }
  if (texts.length === 0) return null;
  return {
    count: texts.length,
    headline: `${plural(texts.length, 'label')} tied to ${texts.length === 1 ? 'its field' : 'their fields'}`,
    restructured: false,
    summary: `${texts.length === 1 ? `The text ${quote(texts[0]!)} sat next to a form field` : `Text sat next to ${plural(texts.length, 'form field')}`} without being tied to it: it is now a <label for> pointing at the field's id`,
    check: 'Check that each label names its field and that the label styling still matches the design.',
    placeholders: [],
  };
}

const FAMILIES = [
  { key: 'headings', matches: /heading|headline/i, fixers: [fixFakeHeadings] },
  { key: 'lists', matches: /\blist|\bli\b|bullet/i, fixers: [fixMalformedLists, fixFakeLists] },
  { key: 'tables', matches: /table|header cell|\bth\b|\btd\b|column header|row header|data cell/i, fixers: [fixDataTables] },
  { key: 'labels', matches: /label|form (field|element|control)|\binput/i, fixers: [fixAdjacentLabels] },
] as const satisfies ReadonlyArray<{ key: string; matches: RegExp; fixers: readonly Fixer[] }>;

export const infoAndRelationships: Recipe = {
  criteria: ['1.3.1'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(
      input,
      fixersFor(input.issueMessage, FAMILIES),
      'No fake heading, fake list, header-less data table or unlabelled field with adjacent text was found in the snippet; the relationship the scanner reported needs a manual look.',
    );
  },
};
