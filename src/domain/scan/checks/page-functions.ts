/**
 * Functions that run inside the page: in Chromium through page.evaluate, in jsdom on its window.
 * Each is self-contained (no imports, no outer variables: its source text is what runs) and takes
 * the document, so both engines run the very same code. pageCall() wraps one for evaluation.
 */

/** What the DOM survey finds, before any language identification (that runs in Node). */
export interface Survey {
  title: string | null;
  /** Absolute http(s) URLs of <a href> (HTML and SVG links), without repeats. */
  links: string[];
  /**
   * Links named alike in one context that lead to different pages (each group pactum-link-purpose
   * reported): their selectors, as in the findings, and their targets (absolute, without fragment).
   * The Chromium engine opens the targets to tell whether they are the same resource after all.
   */
  linkGroups: { selectors: string[]; targets: string[] }[];
  /** Findings of the DOM checks: same link name, different targets; media without an alternative. */
  findings: { check: 'pactum-link-purpose' | 'pactum-link-text' | 'pactum-link-text-alone' | 'pactum-media-alternative' | 'pactum-aria-references'; criterion: string; selector: string; html: string; what: string; evidence: string }[];
  /** The declared language of the page and the text it has, for 3.1.1. */
  pageLang: string | null;
  pageText: string;
  /** Text alternatives (alt, aria-label, aria-labelledby) of images that inherit the page's language. */
  pageNames: string;
  /** Elements in the body with a lang attribute, and the text (and image names) that inherit their language. */
  langElements: { selector: string; html: string; lang: string; text: string }[];
  /** Text blocks with the language they inherit, for 3.1.2. */
  blocks: { selector: string; html: string; lang: string | null; text: string }[];
  /** Whether the page has scripts (jsdom does not run them). */
  scripted: boolean;
}

/**
 * Builds `((__name) => (fn)(document, arg))(f => f)`: the function's source evaluated in the page
 * with its argument. Source transformed by tsx (keepNames) calls a `__name` helper that only
 * exists in Node; the wrapper's parameter supplies it, without touching the page's globals.
 */
export function pageCall(fn: (doc: Document, arg: never) => unknown, arg: unknown = null): string {
  return `((__name) => (${fn.toString()})(document, ${JSON.stringify(arg)}))((f) => f)`;
}

export function surveyDom(doc: Document, opts: { maxBlocks: number; maxLinks: number }): Survey {
  const win = doc.defaultView!;
  // Siblings walked by hand: Array.from(parent.children) is slow in jsdom (a proxy per item).
  const nthOfType = (el: Element): string => {
    let index = 0;
    let count = 0;
    for (let sib = el.parentElement?.firstElementChild ?? null; sib; sib = sib.nextElementSibling) {
      if (sib.localName !== el.localName) continue;
      count++;
      if (sib === el) index = count;
    }
    return count > 1 ? `:nth-of-type(${index})` : '';
  };
  const selectorOf = (el: Element): string => {
    const esc = (s: string) => (win.CSS && win.CSS.escape ? win.CSS.escape(s) : s.replace(/[^\w-]/g, (c) => `\\${c}`));
    if (el.id && doc.querySelectorAll(`#${esc(el.id)}`).length === 1) return `#${esc(el.id)}`;
    const parts: string[] = [];
    let node: Element | null = el;
    while (node && node.nodeType === 1) {
      const tag = node.localName;
      const parent: Element | null = node.parentElement;
      let part = tag;
      if (node.id && doc.querySelectorAll(`#${esc(node.id)}`).length === 1) { parts.unshift(`#${esc(node.id)}`); break; }
      if (parent) part += nthOfType(node);
      parts.unshift(part);
      if (doc.querySelectorAll(parts.join(' > ')).length === 1) break;
      node = parent;
    }
    return parts.join(' > ');
  };
  // Without a query per level (slow on big pages in jsdom): for the many text blocks, of which few are reported.
  const pathOf = (el: Element): string => {
    const parts: string[] = [];
    for (let node: Element | null = el; node && node.nodeType === 1; node = node.parentElement) {
      if (node.id && doc.getElementById(node.id) === node && !/[^\w-]/.test(node.id)) { parts.unshift(`#${node.id}`); break; }
      const parent: Element | null = node.parentElement;
      let part = node.localName;
      if (parent) part += nthOfType(node);
      parts.unshift(part);
      if (part === 'body') break;
    }
    return parts.join(' > ');
  };
  const snippet = (el: Element): string => {
    const html = el.outerHTML;
    const open = html.slice(0, html.indexOf('>') + 1);
    return html.length <= 200 ? html : open;
  };
  const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
  const hrefOf = (a: Element): string | null => {
    const raw = a.getAttribute('href') ?? a.getAttributeNS('http://www.w3.org/1999/xlink', 'href');
    if (raw === null) return null;
    try {
      const url = new win.URL(raw, doc.baseURI);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch {
      return null;
    }
  };
  const nameOf = (el: Element): string => {
    const label = el.getAttribute('aria-label');
    if (label && label.trim()) return squash(label);
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const text = by.split(/\s+/).map((id) => doc.getElementById(id)?.textContent ?? '').join(' ');
      if (text.trim()) return squash(text);
    }
    const alts = el.firstElementChild ? Array.from(el.querySelectorAll('img[alt]')).map((img) => img.getAttribute('alt')).join(' ') : '';
    return squash(`${el.textContent ?? ''} ${alts}`) || squash(el.getAttribute('title'));
  };

  // Links: every <a> with an href, SVG ones included (their href is not a string property).
  const anchors = Array.from(doc.querySelectorAll('a')).filter((a) => a.hasAttribute('href') || a.hasAttributeNS('http://www.w3.org/1999/xlink', 'href'));
  const links: string[] = [];
  const seenLinks = new Set<string>();
  for (const a of anchors) {
    const href = hrefOf(a);
    if (href && !seenLinks.has(href) && links.length < opts.maxLinks) { seenLinks.add(href); links.push(href); }
  }

  const findings: Survey['findings'] = [];
  // 2.4.4: links named alike in one context (the nearest list, navigation, section, table or form) that lead to different pages.
  // Walked by hand: selector matching per link is slow in jsdom on big pages.
  // A div is a context of its own too: links in separate display blocks are not one group.
  const CONTEXT_TAGS = new Set(['div', 'ul', 'ol', 'nav', 'section', 'article', 'aside', 'table', 'form', 'main', 'header', 'footer']);
  // Links a person cannot perceive (hidden, aria-hidden, display: none) are left out.
  const unperceived = (el: Element): boolean => {
    if (el.closest('[hidden], [aria-hidden="true"]')) return true;
    for (let node: Element | null = el; node; node = node.parentElement) {
      const style = win.getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden') return true;
    }
    return false;
  };
  const contextOf = (el: Element): Element => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      const role = node.getAttribute('role');
      if (CONTEXT_TAGS.has(node.localName) || role === 'navigation' || role === 'region') return node;
    }
    return doc.body ?? doc.documentElement;
  };
  const groups = new Map<Element, Map<string, { label: string; els: Element[]; targets: Set<string> }>>();
  /** Links already reported as alike: their name is one thing to fix, listed once. */
  const alike = new Set<Element>();
  const linkGroups: Survey['linkGroups'] = [];
  for (const a of anchors) {
    const href = hrefOf(a);
    const label = nameOf(a);
    const name = label.toLowerCase();
    if (!href || !name) continue;
    const role = a.getAttribute('role');
    if (role && role !== 'link') continue;
    const context = contextOf(a);
    const byName = groups.get(context) ?? new Map<string, { label: string; els: Element[]; targets: Set<string> }>();
    groups.set(context, byName);
    const group = byName.get(name) ?? { label, els: [], targets: new Set<string>() };
    byName.set(name, group);
    group.els.push(a);
    group.targets.add(href.replace(/#.*$/, ''));
  }
  for (const [context, byName] of groups) {
    for (const group of byName.values()) {
      const name = group.label;
      if (group.targets.size < 2) continue;
      // Only now, for the few groups that would be reported: a style lookup per link is slow on big pages in jsdom.
      group.els = group.els.filter((el) => !unperceived(el));
      group.targets = new Set(group.els.map((el) => hrefOf(el)!.replace(/#.*$/, '')));
      if (group.targets.size < 2) continue;
      const where = context.localName === 'body' ? 'on the page' : `in ${selectorOf(context)}`;
      const targets = [...group.targets].slice(0, 4).map((t) => new win.URL(t).pathname + new win.URL(t).search);
      const reported = { selectors: [] as string[], targets: [...group.targets] };
      linkGroups.push(reported);
      for (const el of group.els) {
        alike.add(el);
        const selector = selectorOf(el);
        reported.selectors.push(selector);
        findings.push({
          check: 'pactum-link-purpose', criterion: '2.4.4', selector, html: snippet(el),
          what: `${group.els.length} links named "${name}" ${where} lead to ${group.targets.size} different pages`,
          evidence: `links named "${name}" ${where} lead to ${targets.join(', ')}${group.targets.size > 4 ? ', …' : ''}; tell them apart in their text or with aria-label`,
        });
      }
    }
  }

  // A link's programmatically determined context (WCAG's definition, as the ACT rules read it): the
  // text of its closest block (paragraph, div, list item), of the list items it is in, of its table
  // cell and that cell's header cells, and of what aria-describedby points at; other links' text left out. Its words beyond
  // the generic ones ("click", "here", "more", "the") are what the context adds to the name.
  const LINKS = 'a[href], area[href], [role="link"]';
  const textBesideLinks = (node: Element): string => {
    let out = '';
    const walk = (n: Node) => {
      for (let child = n.firstChild; child; child = child.nextSibling) {
        if (child.nodeType === 3) out += ` ${child.nodeValue ?? ''}`;
        else if (child.nodeType === 1 && !(child as Element).matches(LINKS) && !['script', 'style', 'template'].includes((child as Element).localName)) walk(child);
      }
    };
    walk(node);
    return squash(out);
  };
  const FILLER = new Set(['a', 'an', 'the', 'and', 'or', 'of', 'in', 'on', 'to', 'for', 'at', 'by', 'with', 'from', 'about', 'this', 'that', 'these', 'it', 'is', 'are', 'be', 'you', 'your', 'our', 'we', 'us', 'can', 'here', 'there', 'click', 'tap', 'press', 'see', 'go', 'read', 'more', 'learn', 'find', 'out', 'view', 'show', 'open', 'link', 'page', 'info', 'information', 'details', 'download', 'continue', 'next']);
  const adds = (text: string): boolean => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).some((word) => word.length >= 2 && !FILLER.has(word));
  /** The header cells of a table cell: its headers attribute, or the th of its row and those above it in its columns. */
  const headerCells = (cell: Element): Element[] => {
    const ids = (cell.getAttribute('headers') ?? '').split(/\s+/).filter(Boolean);
    if (ids.length > 0) return ids.map((id) => doc.getElementById(id)).filter((h): h is HTMLElement => h !== null);
    const row = cell.parentElement;
    const table = cell.closest('table');
    if (!row || !table) return [];
    const span = (c: Element) => Math.max(1, Number(c.getAttribute('colspan')) || 1);
    const columnsOf = (r: Element, c: Element): [number, number] => {
      let at = 0;
      for (const other of Array.from(r.children)) {
        if (other === c) return [at, at + span(c)];
        at += span(other);
      }
      return [-1, -1];
    };
    const [from, to] = columnsOf(row, cell);
    const heads = Array.from(row.children).filter((c) => c !== cell && c.localName === 'th');
    for (const r of Array.from(table.querySelectorAll('tr'))) {
      if (r === row) break;
      for (const c of Array.from(r.children)) {
        if (c.localName !== 'th') continue;
        const [a, b] = columnsOf(r, c);
        if (a < to && b > from) heads.push(c);
      }
    }
    return heads;
  };
  const BLOCKS = new Set(['block', 'list-item', 'inline-block', 'flow-root', 'table-cell', 'table-caption']);
  const linkContext = (el: Element): string => {
    const parts: string[] = [];
    // The closest ancestor that lays out as a block (a paragraph, a div, a list item), short of the
    // page's main content and the body: the whole page is not a link's context.
    for (let node = el.parentElement; node && node !== doc.body && node !== doc.documentElement && node.localName !== 'main' && node.getAttribute('role') !== 'main'; node = node.parentElement) {
      if (!BLOCKS.has(win.getComputedStyle(node).display)) continue;
      parts.push(textBesideLinks(node));
      break;
    }
    for (let item = el.parentElement?.closest('li, [role="listitem"]'); item; item = item.parentElement?.closest('li, [role="listitem"]')) parts.push(textBesideLinks(item));
    const cell = el.parentElement?.closest('td, th, [role="cell"], [role="gridcell"]');
    if (cell) {
      parts.push(textBesideLinks(cell));
      // Header cells name the row only when no data cell of the row holds text of its own: a row
      // whose name sits in a plain data cell (not a row header) is not announced with its links.
      const row = cell.parentElement;
      const unnamedRow = row ? Array.from(row.children).some((c) => c !== cell && c.localName === 'td' && adds(textBesideLinks(c))) : false;
      if (!unnamedRow) for (const head of headerCells(cell)) parts.push(textBesideLinks(head));
    }
    for (const id of (el.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean)) parts.push(squash(doc.getElementById(id)?.textContent));
    const text = squash(parts.join(' '));
    return adds(text) ? text : '';
  };

  // 2.4.4 / 2.4.9: links named by a word that says nothing of where they lead ("More", "Go", "PDF").
  const GENERIC = /^(more|read more|learn more|see more|show more|find out more|more info|more information|info|details|click here|click|here|go|go to|this|this link|this page|this product|link|continue|next|download|open|view|html|pdf|epub|plain text|txt|doc|docx)$/;
  const linkish = Array.from(doc.querySelectorAll('[role="link"]')).concat(anchors, Array.from(doc.querySelectorAll('area[href]')));
  const seenGeneric = new Set<Element>();
  for (const el of linkish) {
    if (seenGeneric.has(el) || alike.has(el) || findings.length > 200) continue;
    seenGeneric.add(el);
    const role = el.getAttribute('role');
    if (role && role !== 'link') continue;
    const name = nameOf(el).toLowerCase().replace(/[.…:!?»›→]+$/u, '').trim();
    if (!GENERIC.test(name) || unperceived(el)) continue;
    const context = linkContext(el);
    if (context) {
      // Its context says where it leads (2.4.4 holds); its name alone does not (2.4.9, AAA).
      findings.push({
        check: 'pactum-link-text-alone', criterion: '2.4.9', selector: selectorOf(el), html: snippet(el),
        what: `the link is named only "${nameOf(el)}": out of its context (a list of links, a screen reader's links menu) it says nothing of where it leads`,
        evidence: `its name says nothing of its destination; only the text of its context does: "${context.slice(0, 100)}"`,
      });
      continue;
    }
    findings.push({
      check: 'pactum-link-text', criterion: '2.4.4', selector: selectorOf(el), html: snippet(el),
      what: `the link is named only "${nameOf(el)}", and neither its paragraph, list item, table cell and headers nor its description say more`,
      evidence: 'its name says nothing of its destination, and its programmatically determined context (the paragraph, list items, table cell and header cells around it, aria-describedby) adds nothing to it',
    });
  }

  // 1.2.1 / 1.2.2: media with neither captions nor a transcript near it. A shown block of text
  // of transcript length beside the media (in its figure, section, article or div, or the main
  // content) may be its alternative: whether it conveys all of it is for a person to judge, and
  // the check reports media without any.
  const TRANSCRIPT_WORDS = 20;
  const textBeside = (media: Element): number => {
    const around = media.parentElement?.closest('figure, section, article, li, div, main, body') ?? media.parentElement;
    let most = 0;
    for (const block of Array.from(around?.querySelectorAll('p, blockquote, figcaption, dd, li, td, pre, details') ?? [])) {
      if (most >= TRANSCRIPT_WORDS) break;
      if (unperceived(block)) continue;
      most = Math.max(most, squash(block.textContent).split(' ').filter(Boolean).length);
    }
    return most;
  };
  const TRANSCRIPT = /transcript|caption|subtitle|text version|audio description|textfassung|transcription/i;
  for (const media of Array.from(doc.querySelectorAll('audio, video'))) {
    const tracks = Array.from(media.querySelectorAll('track')).map((t) => (t.getAttribute('kind') ?? 'subtitles').toLowerCase());
    const captioned = tracks.some((k) => k === 'captions' || k === 'subtitles' || k === 'descriptions');
    const describedBy = (media.getAttribute('aria-describedby') ?? '').split(/\s+/).some((id) => id && TRANSCRIPT.test(doc.getElementById(id)?.textContent ?? ''));
    const around = media.closest('figure, section, article, li, div') ?? media.parentElement;
    const nearby = around ? Array.from(around.querySelectorAll('a, button, details summary')).some((el) => TRANSCRIPT.test(nameOf(el)) || TRANSCRIPT.test(el.getAttribute('href') ?? '')) : false;
    const video = media.localName === 'video';
    if ((video && captioned) || describedBy || nearby || textBeside(media) >= TRANSCRIPT_WORDS) continue;
    // Audio a person cannot start (no controls, no autoplay) and media nobody sees are not what they meet.
    if ((!video && !media.hasAttribute('controls') && !media.hasAttribute('autoplay')) || unperceived(media)) continue;
    if (!video && captioned) continue;
    findings.push({
      check: 'pactum-media-alternative', criterion: video ? '1.2.2' : '1.2.1', selector: selectorOf(media), html: snippet(media),
      what: video ? 'the video has no captions track and no transcript near it' : 'the audio has no transcript near it',
      evidence: `no <track kind="captions">${video ? '' : ' (audio)'}, no aria-describedby pointing at a transcript, and no link or button naming a transcript or captions in ${around ? selectorOf(around) : 'its parent'}`,
    });
  }

  // 1.3.1: aria-controls of an expanded combobox or of a scrollbar names the element it operates;
  // when none of its IDs exists in the element's own tree (the document, or its shadow root),
  // assistive technology cannot tell what the control controls. Open shadow roots are searched too.
  const roots: (Document | ShadowRoot)[] = [doc];
  for (let i = 0; i < roots.length && roots.length < 200; i++) {
    for (const el of Array.from(roots[i]!.querySelectorAll('*'))) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  for (const root of roots) {
    for (const el of Array.from(root.querySelectorAll('[aria-controls]'))) {
      const role = (el.getAttribute('role') ?? '').trim().split(/\s+/)[0] ?? '';
      const combobox = (role === 'combobox' || (role === '' && el.localName === 'input' && el.hasAttribute('list'))) && el.getAttribute('aria-expanded')?.trim().toLowerCase() === 'true';
      if (!combobox && role !== 'scrollbar') continue;
      const ids = (el.getAttribute('aria-controls') ?? '').split(/\s+/).filter(Boolean);
      if (ids.length > 0 && ids.some((id) => root.getElementById(id) !== null)) continue;
      findings.push({
        check: 'pactum-aria-references', criterion: '1.3.1', selector: root === doc ? selectorOf(el) : `${selectorOf((root as ShadowRoot).host)} >>> ${el.localName}`, html: snippet(el),
        what: `the ${combobox ? 'expanded combobox' : 'scrollbar'}'s aria-controls names ${ids.length === 0 ? 'no ID' : ids.map((id) => `"${id}"`).join(', ')}, and no element with ${ids.length > 1 ? 'any of those IDs' : 'that ID'} is in its ${root === doc ? 'document' : 'shadow tree'}`,
        evidence: `aria-controls="${el.getAttribute('aria-controls')}"; ${root === doc ? 'the document' : 'the shadow tree it is in'} has no element with ${ids.length > 1 ? 'any of those IDs' : 'that ID'}`,
      });
    }
  }

  // 3.1.x: the text, and each block of text with the language it inherits.
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'code', 'pre', 'kbd', 'samp']);
  const textOf = (el: Element): string => {
    let out = '';
    const walk = (node: Node) => {
      for (let child = node.firstChild; child; child = child.nextSibling) {
        if (child.nodeType === 3) out += child.nodeValue;
        else if (child.nodeType === 1 && !SKIP.has((child as Element).localName) && !(child as Element).hasAttribute('lang') && !(child as Element).hasAttribute('hidden')) walk(child);
        if (out.length > 4000) return;
      }
    };
    walk(el);
    return squash(out);
  };
  const langOf = (el: Element): string | null => {
    for (let node: Element | null = el; node; node = node.parentElement) {
      const value = node.getAttribute('lang')?.trim();
      if (value) return value;
      if (value === '') return null;
    }
    return null;
  };
  const blocks: Survey['blocks'] = [];
  for (const el of Array.from(doc.querySelectorAll('p, li, h1, h2, h3, h4, h5, h6, td, th, blockquote, figcaption, dd, dt, caption, summary'))) {
    if (blocks.length >= opts.maxBlocks) break;
    if ((el.textContent ?? '').length < 40) continue; // cheap first: most cells and items are short
    const text = textOf(el);
    if (text.length < 40) continue;
    let hidden = false;
    for (let node: Element | null = el; node && !hidden; node = node.parentElement) hidden = node.hasAttribute('hidden') || node.getAttribute('aria-hidden') === 'true';
    if (hidden) continue;
    blocks.push({ selector: pathOf(el), html: snippet(el), lang: langOf(el), text: text.slice(0, 1000) });
  }
  // Image names (alt, aria-label, aria-labelledby) are text of the language the image inherits.
  const imageName = (img: Element): string => {
    const by = img.getAttribute('aria-labelledby');
    const labelled = by ? by.split(/\s+/).map((id) => doc.getElementById(id)?.textContent ?? '').join(' ') : '';
    return squash(labelled || img.getAttribute('aria-label') || img.getAttribute('alt') || '');
  };
  const namesInheriting = (el: Element): string => Array.from(el.querySelectorAll('img, [role="img"], area, input[type="image"]'))
    .filter((img) => img.parentElement?.closest('[lang]') === el || (img.parentElement?.closest('[lang]') === null && el === doc.documentElement))
    .map(imageName).filter(Boolean).join(' ');
  const langElements: Survey['langElements'] = [];
  for (const el of Array.from(doc.body?.querySelectorAll('[lang]') ?? [])) {
    if (langElements.length >= opts.maxBlocks) break;
    const lang = el.getAttribute('lang')!.trim();
    if (!lang || el.closest('[hidden]')) continue;
    const text = squash(`${textOf(el)} ${namesInheriting(el)}`);
    if (text) langElements.push({ selector: pathOf(el), html: snippet(el), lang, text: text.slice(0, 1000) });
  }

  const html = doc.documentElement;
  const body = doc.body;
  const scripted = Array.from(doc.querySelectorAll('script')).some((s) => {
    const type = (s.getAttribute('type') ?? '').trim().toLowerCase();
    return type === '' || type === 'module' || /javascript|ecmascript/.test(type);
  });
  return {
    title: squash(doc.title) || null,
    links,
    linkGroups,
    findings,
    pageLang: html?.getAttribute('lang')?.trim() || null,
    pageText: body ? textOf(body).slice(0, 4000) : '',
    pageNames: html ? namesInheriting(html).slice(0, 1000) : '',
    langElements,
    blocks,
    scripted,
  };
}
