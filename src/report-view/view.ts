/**
 * The report view: runs in the browser, as the MCP App ui://pactum/report inside a host's
 * sandboxed frame (talking to the host in MCP Apps' postMessage dialect: host.ts), or as the page
 * GET /reports/{id} (its report embedded in the page). It draws the report model
 * (report-view.json) with the DOM API only: no innerHTML of report text, no inline style
 * attributes (colours are set through CSSOM, which a strict CSP allows), no network of its own.
 */
import type { components } from '../../generated/types/dashboard.js';
import { applyHostContext, connectToHost, type ToolResult } from './host.js';

type ReportView = components['schemas']['report-view'];
type Rule = ReportView['rules'][number];
type ViewIssue = Rule['issues'][number];
type Progress = components['schemas']['scan-progress'];
type FleetSite = components['schemas']['fleet-site'];

interface Host {
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  screenshotSrc(scanId: string, id: string): Promise<string>;
  canDraftFixes: boolean;
}

const root = document.getElementById('app')!;
const FINISHED = new Set(['completed', 'completed_with_errors']);

// ---------------------------------------------------------------------------------------------
// DOM helpers

type Child = Node | string | null | undefined | false;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string | number | boolean | undefined> | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k === 'text') el.textContent = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** A URL's path and query (no URL object: the view shortens one per issue). */
const shortUrl = (url: string) => {
  const m = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*([^#]*)/i.exec(url);
  return m ? m[1] || '/' : url;
};
/** A time as "2026-05-01 14:03 UTC": the first toLocaleString of a page costs Chromium tens of ms. */
const utcTime = (iso: string) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
};

function status(text: string) {
  let live = document.getElementById('status');
  if (!live) {
    live = h('p', { id: 'status', role: 'status', class: 'status' });
    root.prepend(live);
  }
  live.textContent = text;
}

// ---------------------------------------------------------------------------------------------
// the report

function summarySection(view: ReportView): HTMLElement {
  const s = view.summary;
  const levels = h('ul', { class: 'counts' },
    h('li', { class: 'count error' }, h('strong', { text: s.byLevel.error }), ' errors'),
    h('li', { class: 'count warning' }, h('strong', { text: s.byLevel.warning }), ' warnings (need review)'),
    h('li', { class: 'count notice' }, h('strong', { text: s.byLevel.notice }), ' notices'),
    h('li', { class: 'count' }, h('strong', { text: s.pagesScanned }), ` pages checked`),
    s.pagesFailed > 0 && h('li', { class: 'count error' }, h('strong', { text: s.pagesFailed }), ' could not be checked'),
    view.brandScore !== null && h('li', { class: 'count' }, 'Brand score ', h('strong', { text: Math.round(view.brandScore) }), ' of 100'),
  );
  const table = h('table', { class: 'principles' },
    h('caption', { text: 'Issues by WCAG principle and conformance level' }),
    h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'Principle' }), h('th', { scope: 'col', text: 'A' }), h('th', { scope: 'col', text: 'AA' }), h('th', { scope: 'col', text: 'AAA' }))),
    h('tbody', null, ...s.byPrinciple.map((p) => h('tr', null, h('th', { scope: 'row', text: `${p.principle}. ${p.name}` }), h('td', { text: p.A }), h('td', { text: p.AA }), h('td', { text: p.AAA })))),
  );
  const notEvaluated = s.notEvaluated.length > 0 && h('div', { class: 'not-evaluated' },
    h('h3', { text: 'Not evaluated' }),
    h('p', { text: `These rules could neither pass nor fail with the ${view.engine ?? 'scan'} engine; they are not counted as passed.` }),
    h('ul', null, ...s.notEvaluated.map((n) => h('li', null, h('code', { text: n.code }), ` (WCAG ${n.wcagCriteria.join(', ') || '–'}): ${n.reason}, on ${plural(n.pages, 'page')}`))),
  );
  const skipped = s.screenshotsSkipped && h('p', { class: 'screenshots-skipped', text: `${plural(s.screenshotsSkipped.count, 'screenshot')} of failing elements could not be kept: ${s.screenshotsSkipped.reason}.` });
  return h('section', { 'aria-labelledby': 'summary-h' }, h('h2', { id: 'summary-h', text: 'Summary' }), levels, skipped, table, notEvaluated);
}

// ---------------------------------------------------------------------------------------------
// the trend of the site's open findings

type TrendPoint = NonNullable<ReportView['trend']>[number];
/** The levels as the chart tells them apart without colour: each its own dash, marker and label. */
const TREND_LEVELS = [
  { key: 'error', name: 'Errors', line: 'solid line, circles', dash: '', marker: 'circle' },
  { key: 'warning', name: 'Need review', line: 'dashed line, squares', dash: '8 4', marker: 'square' },
  { key: 'notice', name: 'Notices', line: 'dotted line, triangles', dash: '2 3', marker: 'triangle' },
] as const;
const SVG_NS = 'http://www.w3.org/2000/svg';

function sv(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

const day = (iso: string) => iso.slice(5, 10);

/** A marker of a level's shape at (x, y). */
function marker(shape: string, x: number, y: number, cls: string): SVGElement {
  if (shape === 'circle') return sv('circle', { cx: x, cy: y, r: 4, class: cls });
  if (shape === 'square') return sv('rect', { x: x - 4, y: y - 4, width: 8, height: 8, class: cls });
  return sv('path', { d: `M${x} ${y - 5}L${x + 5} ${y + 4}L${x - 5} ${y + 4}Z`, class: cls });
}

/**
 * The open findings of the site's last runs: an inline SVG line chart (role img, named by its
 * title and described by its desc, each level its own dash pattern and marker shape, named in the
 * legend) and the same numbers as a table in a disclosure. It draws from the model alone and
 * loads nothing. The words are HTML beside the drawing, not SVG text: text in an image has no
 * background a contrast check can measure.
 */
function trendSection(view: ReportView, trend: TrendPoint[]): HTMLElement {
  const W = 560, H = 180, P = 8;
  const max = Math.max(1, ...trend.flatMap((p) => [p.open.error, p.open.warning, p.open.notice]));
  const top = max <= 4 ? max : Math.ceil(max / 4) * 4;
  const x = (i: number) => (trend.length === 1 ? W / 2 : P + (i * (W - 2 * P)) / (trend.length - 1));
  const y = (n: number) => P + (H - 2 * P) * (1 - n / top);
  const first = trend[0]!, last = trend[trend.length - 1]!;
  const change = TREND_LEVELS.map((l) => `${l.name.toLowerCase()} ${first.open[l.key]} to ${last.open[l.key]}`).join(', ');
  const desc = `Open findings of ${view.siteUrl} in each of its last ${plural(trend.length, 'run')}, from ${day(first.finishedAt)} to ${day(last.finishedAt)}: ${change}. ` +
    'Findings marked a false positive, accepted, or passed in review are not counted. The same numbers are in the table below.';
  const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'trend-title trend-desc', class: 'trend-chart' },
    sv('title', { id: 'trend-title' }, 'Open findings per run, by level'),
    sv('desc', { id: 'trend-desc' }, desc));
  for (const n of [0, top / 2, top]) svg.append(sv('line', { x1: 0, x2: W, y1: y(n), y2: y(n), class: 'grid' }));
  for (const l of TREND_LEVELS) {
    svg.append(sv('polyline', { points: trend.map((p, i) => `${x(i)},${y(p.open[l.key])}`).join(' '), class: `series ${l.key}`, ...(l.dash ? { 'stroke-dasharray': l.dash } : {}) }));
    trend.forEach((p, i) => svg.append(marker(l.marker, x(i), y(p.open[l.key]), `mark ${l.key}`)));
  }
  const ticks = (cls: string, labels: (string | number)[]) => h('div', { class: cls, 'aria-hidden': 'true' }, ...labels.map((t) => h('span', { text: t })));
  const legend = h('ul', { class: 'trend-legend' }, ...TREND_LEVELS.map((l) => h('li', null,
    sv('svg', { viewBox: '0 0 32 12', width: 32, height: 12, 'aria-hidden': 'true', class: 'trend-key' },
      sv('line', { x1: 0, x2: 32, y1: 6, y2: 6, class: `series ${l.key}`, ...(l.dash ? { 'stroke-dasharray': l.dash } : {}) }), marker(l.marker, 16, 6, `mark ${l.key}`)),
    ` ${l.name} (${l.line}): `, h('strong', { text: last.open[l.key] }), ' in this run')));
  const table = h('table', { class: 'trend' },
    h('caption', { text: 'Open findings per run (false positives, accepted findings and passed reviews not counted)' }),
    h('thead', null, h('tr', null, ...['Run finished', ...TREND_LEVELS.map((l) => l.name)].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', null, ...trend.map((p) => h('tr', null,
      h('th', { scope: 'row', text: `${utcTime(p.finishedAt)}${p.scanId === view.scanId ? ' (this report)' : ''}` }),
      ...TREND_LEVELS.map((l) => h('td', { text: p.open[l.key] }))))),
  );
  return h('section', { 'aria-labelledby': 'trend-h' },
    h('h2', { id: 'trend-h', text: 'Open findings over the last runs' }),
    h('figure', { class: 'trend-figure' },
      h('div', { class: 'trend-plot' }, ticks('trend-y', [top, top / 2 === Math.round(top / 2) ? top / 2 : '', 0]), svg, h('span', null), ticks('trend-x', trend.map((p) => day(p.finishedAt)))),
      h('figcaption', null, legend)),
    h('details', null, h('summary', { text: 'The trend as a table' }), h('div', { class: 'scroll' }, table)),
  );
}

let pageRowPrototype: HTMLTableRowElement | undefined;
/** A page's table row (title and URL, errors, warnings, not evaluated, what to do), to be cloned and filled in. */
function pageRow(): HTMLTableRowElement {
  pageRowPrototype ??= h('tr', null,
    h('th', { scope: 'row' }, h('span', { class: 'page-title' }), h('br', null), h('span', { class: 'url' })),
    h('td', null), h('td', null), h('td', null), h('td', null));
  return pageRowPrototype.cloneNode(true) as HTMLTableRowElement;
}

/** The pages, worst first; the table handles its rows' "Show issues" clicks. */
function pagesSection(view: ReportView, onFilter: (url: string | null) => void): HTMLElement {
  const urlOf = new Map<Element, string>();
  const rows = view.pages.map((p) => {
    const tr = pageRow();
    const [th, errors, warnings, notEvaluated, action] = tr.children as unknown as [HTMLElement, HTMLElement, HTMLElement, HTMLElement, HTMLElement];
    if (p.error) tr.className = 'failed';
    th.firstChild!.textContent = p.title ?? shortUrl(p.url);
    th.lastChild!.textContent = p.url;
    if (p.error) errors.append(h('span', { class: 'badge error', text: 'Could not be checked' }));
    else errors.textContent = String(p.byLevel.error);
    warnings.textContent = p.error ? '–' : String(p.byLevel.warning);
    notEvaluated.textContent = String(p.notEvaluated.length);
    if (p.error) action.append(h('span', { class: 'why', text: p.error }));
    else if (p.issueCount > 0) {
      const show = h('button', { type: 'button', class: 'btn', 'aria-label': `Show issues: ${plural(p.issueCount, 'issue')} on ${shortUrl(p.url)}`, text: 'Show issues' });
      urlOf.set(show, p.url);
      action.append(show);
    } else action.textContent = 'No issues found';
    return tr;
  });
  const body = h('tbody', null, ...rows);
  body.addEventListener('click', (e) => {
    const url = urlOf.get((e.target as Element).closest('button') as Element);
    if (url !== undefined) onFilter(url);
  });
  return h('section', { 'aria-labelledby': 'pages-h' },
    h('h2', { id: 'pages-h', text: 'Pages, worst first' }),
    h('div', { class: 'scroll' }, h('table', { class: 'pages' },
      h('thead', null, h('tr', null, ...['Page', 'Errors', 'Warnings', 'Not evaluated', 'Issues'].map((t) => h('th', { scope: 'col', text: t })))),
      body,
    )),
  );
}

function button(label: string, text: string, onClick: () => void, cls = 'btn'): HTMLButtonElement {
  const b = h('button', { type: 'button', class: cls, 'aria-label': label !== text ? label : undefined, text });
  b.addEventListener('click', onClick);
  return b;
}

function contrastBlock(c: NonNullable<ViewIssue['contrast']>): HTMLElement {
  const swatch = (colour: string, what: string) => {
    const s = h('span', { class: 'swatch', 'data-colour': colour, title: `${what} ${colour}` });
    s.style.setProperty('background-color', colour);
    return s;
  };
  return h('p', { class: 'contrast' },
    swatch(c.foreground, 'Text colour'), h('span', { text: ` text ${c.foreground} ` }),
    swatch(c.background, 'Background colour'), h('span', { text: ` on background ${c.background}` }),
    h('span', { class: 'ratio' }, ': contrast ', h('strong', { text: `${c.ratio}:1` }), `, needs at least ${c.required}:1`),
    c.apca && h('span', { class: 'apca' }, '; APCA ', h('strong', { text: `Lc ${c.apca.lc}` }),
      `, the WCAG 3 draft suggests |Lc| ${c.apca.threshold} for this text (${c.apca.meets ? 'met' : 'not met'}; advisory)`),
  );
}

/** What reviewers decided about a finding (the mark follows its fingerprint across scans), if anything. */
function findingLine(f: NonNullable<ViewIssue['finding']>): HTMLElement | null {
  const m = f.mark;
  if (!m) return null;
  const lines: Record<string, string | null> = {
    false_positive: `Marked a false positive: ${m.reason ?? ''}`,
    accepted: `Accepted until ${(m.expiresAt ?? '').slice(0, 10)}: ${m.reason ?? ''}`,
    confirmed: m.mark === 'confirmed' ? 'Confirmed by a reviewer: to fix.' : `Failed review: ${m.review?.note ?? ''}`,
    review_passed: `Passed review: ${m.review?.note ?? ''}`,
    open: m.expired ? `Open again: its acceptance expired on ${(m.expiresAt ?? '').slice(0, 10)}.` : null,
  };
  const text = lines[f.status];
  return text ? h('p', { class: 'finding-mark' }, h('strong', { text: 'Review: ' }), text) : null;
}

function issueDetail(view: ReportView, rule: Rule, issue: ViewIssue, host: Host | null): HTMLElement {
  const criterion = issue.wcagCriterion ? `WCAG ${issue.wcagCriterion}${rule.level ? ` (level ${rule.level})` : ''}` : 'no WCAG criterion';
  const dl = h('dl', null,
    h('dt', { text: 'Page' }), h('dd', null, h('span', { class: 'url', text: issue.pageUrl })),
    h('dt', { text: 'Element' }), h('dd', null, h('code', { text: issue.selector })),
    h('dt', { text: 'Criterion' }), h('dd', { text: `${criterion}${issue.en301549 ? `; EN 301 549 ${issue.en301549}` : ''}; impact ${issue.impact ?? 'not rated'}` }),
  );
  const detail = h('div', { class: 'detail' },
    h('p', { class: 'message', text: issue.message }),
    dl,
    h('pre', null, h('code', { text: issue.context })),
    issue.contrast && contrastBlock(issue.contrast),
    issue.evidence && h('p', { class: 'evidence' }, h('strong', { text: 'Evidence: ' }), issue.evidence),
    issue.finding && findingLine(issue.finding),
  );
  if (issue.screenshot) {
    const figure = h('figure', { class: 'shot' }, h('figcaption', { text: `The element ${issue.selector}, outlined in red` }));
    detail.append(figure);
    if (host) {
      void host.screenshotSrc(view.scanId, issue.screenshot).then((src) => {
        figure.prepend(h('img', { src, alt: `Screenshot of the element ${issue.selector}` }));
      }, () => figure.append(h('p', { text: 'The screenshot could not be loaded.' })));
    }
  }
  detail.append(h('p', null, h('a', { href: issue.helpUrl, target: '_blank', rel: 'noopener noreferrer', text: `How to fix ${rule.code} (opens in a new tab)` })));
  if (host?.canDraftFixes && issue.wcagCriterion) {
    const out = h('div', { class: 'fix', 'aria-live': 'polite' });
    const draft = button(`Draft a fix for this ${rule.code} issue`, 'Draft a fix', () => {
      draft.disabled = true;
      out.textContent = 'Drafting a fix…';
      host.call('dashboard_generate_fix', { wcagCriterion: issue.wcagCriterion, issueMessage: issue.message, htmlContext: issue.context }).then((r) => {
        out.textContent = '';
        const diff = typeof r.diff === 'string' ? r.diff : '';
        out.append(h('h5', { text: 'Drafted fix (review before use)' }), diffBlock(diff));
        if (typeof r.explanation === 'string') out.append(h('p', { text: r.explanation }));
      }, (err: unknown) => {
        out.textContent = `No fix could be drafted: ${err instanceof Error ? err.message : String(err)}`;
      }).finally(() => { draft.disabled = false; });
    });
    detail.append(draft, out);
  }
  return detail;
}

function diffBlock(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff' });
  for (const line of diff.split('\n')) {
    const cls = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : undefined;
    pre.append(h('span', { class: cls, text: `${line}\n` }));
  }
  return pre;
}

let issueRowPrototype: HTMLLIElement | undefined;
/** An issue's list item (its button and the slot its detail opens in), to be cloned and filled in. */
function issueRow(): HTMLLIElement {
  issueRowPrototype ??= h('li', null,
    h('button', { type: 'button', class: 'issue', 'aria-expanded': 'false' }, h('span', { class: 'n' }), ' ', h('code', null), h('span', { class: 'on' })),
    h('div', { hidden: true }));
  return issueRowPrototype.cloneNode(true) as HTMLLIElement;
}

/**
 * The issues of a rule, as a list whose items are buttons: Tab reaches the list once (roving
 * tabindex), the arrow keys, Home and End move between its issues, Enter or Space opens one.
 * Rows are clones of one prototype and the list handles their clicks: a thousand issues cost a
 * thousand clones, not seven thousand elements and a thousand listeners built one by one.
 */
function issueList(view: ReportView, rule: Rule, host: Host | null): HTMLElement {
  const list = h('ul', { class: 'issues', 'aria-label': `${rule.code} issues` });
  const buttons: HTMLButtonElement[] = [];
  const issueOf = new Map<Element, ViewIssue>();
  rule.issues.forEach((issue, n) => {
    const li = issueRow();
    const b = li.firstChild as HTMLButtonElement;
    const slot = li.lastChild as HTMLDivElement;
    li.dataset.page = issue.pageUrl;
    b.id = `i-${issue.id}`;
    slot.id = `d-${issue.id}`;
    b.setAttribute('aria-controls', slot.id);
    b.tabIndex = n === 0 ? 0 : -1;
    b.firstChild!.textContent = `${n + 1}.`;
    b.children[1]!.textContent = issue.selector;
    b.lastChild!.textContent = ` on ${shortUrl(issue.pageUrl)}`;
    buttons.push(b);
    issueOf.set(b, issue);
    list.append(li);
  });
  list.addEventListener('click', (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>('button.issue');
    const issue = b && issueOf.get(b);
    if (!b || !issue) return;
    const slot = b.nextElementSibling as HTMLElement;
    const open = b.getAttribute('aria-expanded') === 'true';
    b.setAttribute('aria-expanded', String(!open));
    if (!open && !slot.firstChild) slot.append(issueDetail(view, rule, issue, host));
    slot.hidden = open;
  });
  list.addEventListener('keydown', (e) => {
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (at < 0) return;
    const visible = buttons.filter((x) => !(x.parentElement as HTMLElement).hidden);
    const i = visible.indexOf(buttons[at]!);
    const to = e.key === 'ArrowDown' ? visible[i + 1] : e.key === 'ArrowUp' ? visible[i - 1] : e.key === 'Home' ? visible[0] : e.key === 'End' ? visible[visible.length - 1] : undefined;
    if (!to) return;
    e.preventDefault();
    buttons[at]!.tabIndex = -1;
    to.tabIndex = 0;
    to.focus();
  });
  return list;
}

/**
 * The issues grouped by rule. Only the first group is open; the others' bodies are drawn when
 * opened, when the pages are filtered, or in slices between frames after the report appears
 * (`drawRest`), so a large report shows at once and is complete a moment later.
 */
function rulesSection(view: ReportView, host: Host | null): { section: HTMLElement; filter(url: string | null): void; drawRest(done: () => void): void } {
  const filterNote = h('p', { class: 'filter', hidden: true });
  const groups = view.rules.map((rule, r) => {
    const bodyId = `rule-${r}`;
    const head = h('button', { type: 'button', class: 'rule-toggle', 'aria-expanded': r === 0 ? 'true' : 'false', 'aria-controls': bodyId },
      h('span', { class: `badge ${rule.type}`, text: rule.type }), ' ',
      h('span', { class: 'rule-code', text: rule.code }), ' ',
      h('span', { class: 'rule-count', text: `${plural(rule.count, 'issue')} on ${plural(rule.pages, 'page')}` }),
    );
    const body = h('div', { id: bodyId, class: 'rule-body', hidden: r !== 0 });
    let drawn = false;
    const draw = () => {
      if (drawn) return;
      drawn = true;
      body.append(
        h('p', { class: 'rule-meta' },
          rule.help, '. ',
          rule.wcagCriteria.length ? `WCAG ${rule.wcagCriteria.join(', ')}${rule.level ? ` (level ${rule.level})` : ''}. ` : 'No WCAG criterion (best practice). ',
          rule.impact ? `Impact: ${rule.impact}. ` : '',
          h('a', { href: rule.helpUrl, target: '_blank', rel: 'noopener noreferrer', text: `About ${rule.code} (opens in a new tab)` }),
        ),
      );
      if (rule.issues.length < rule.count) body.append(h('p', { class: 'note', text: `The first ${rule.issues.length} of ${rule.count} are listed (REPORT_MAX_ISSUES); the exports list them all.` }));
      body.append(issueList(view, rule, host));
    };
    if (r === 0) draw();
    head.addEventListener('click', () => {
      draw();
      const open = head.getAttribute('aria-expanded') === 'true';
      head.setAttribute('aria-expanded', String(!open));
      body.hidden = open;
    });
    return { rule, el: h('section', { class: `rule ${rule.type}` }, h('h3', null, head), body), body, head, draw };
  });
  const section = h('section', { 'aria-labelledby': 'rules-h' }, h('h2', { id: 'rules-h', text: 'Issues by rule' }), filterNote,
    view.rules.length === 0 ? h('p', { text: 'No issues were found on the pages that could be checked.' }) : null,
    ...groups.map((g) => g.el));
  return {
    section,
    drawRest(done) {
      let next = 1;
      // Up to 50 ms of groups at a time (a task no longer than that keeps input responsive), then the browser's turn.
      const slice = () => {
        const until = performance.now() + 50;
        while (next < groups.length && performance.now() < until) groups[next++]!.draw();
        if (next < groups.length) setTimeout(slice, 0);
        else done();
      };
      setTimeout(slice, 0);
    },
    filter(url) {
      for (const g of groups) g.draw();
      for (const g of groups) {
        let shown = 0;
        for (const li of g.body.querySelectorAll<HTMLElement>('li[data-page]')) {
          li.hidden = url !== null && li.dataset.page !== url;
          if (!li.hidden) shown++;
        }
        g.el.hidden = shown === 0;
        if (url !== null && shown > 0) {
          g.head.setAttribute('aria-expanded', 'true');
          g.body.hidden = false;
        }
      }
      filterNote.hidden = url === null;
      filterNote.textContent = '';
      if (url !== null) {
        filterNote.append(`Showing the issues of ${url}. `, button('Show all pages', 'Show all pages', () => this.filter(null)));
        const first = groups.find((g) => !g.el.hidden)?.body.querySelector<HTMLButtonElement>('li:not([hidden]) button.issue');
        if (first) {
          for (const b of first.closest('ul')!.querySelectorAll<HTMLButtonElement>('button.issue')) b.tabIndex = -1;
          first.tabIndex = 0;
          first.focus();
        }
      }
    },
  };
}

export function renderReport(view: ReportView, host: Host | null) {
  const t0 = performance.now();
  root.textContent = '';
  root.setAttribute('aria-busy', 'true');
  const title = h('h1', { text: 'Accessibility report' });
  const facts = h('p', { class: 'facts' },
    h('span', { class: 'url', text: view.siteUrl }),
    `: checked against ${view.standard} with the ${view.engine ?? 'unknown'} engine; the scan ${view.status === 'completed_with_errors' ? 'completed, but some pages could not be checked' : view.status}`,
    view.finishedAt ? ` on ${utcTime(view.finishedAt)}.` : '.',
  );
  const rules = rulesSection(view, host);
  const pages = pagesSection(view, (url) => rules.filter(url));
  root.append(title, facts, summarySection(view));
  if (view.trend?.length) root.append(trendSection(view, view.trend));
  root.append(pages, rules.section);
  root.setAttribute('aria-busy', 'false');
  document.title = `Accessibility report: ${view.siteUrl}`;
  // The benchmark's measures: the report shown, and every issue's row drawn.
  const measures = window as unknown as { __pactumRenderMs?: number; __pactumAllDrawnMs?: number };
  measures.__pactumRenderMs = performance.now() - t0;
  measures.__pactumAllDrawnMs = undefined;
  rules.drawRest(() => { measures.__pactumAllDrawnMs = performance.now() - t0; });
}

// ---------------------------------------------------------------------------------------------
// progress and fleet

function renderProgress(p: Progress) {
  root.textContent = '';
  const total = p.totalPages ?? 0;
  const bar = h('progress', { id: 'scan-progress', max: Math.max(total, 1), value: p.pagesScanned, 'aria-label': 'Pages scanned' });
  const eta = p.etaSeconds !== null && p.etaSeconds !== undefined ? `, about ${Math.max(1, Math.round(p.etaSeconds))} s left` : '';
  root.append(
    h('h1', { text: 'Accessibility scan in progress' }),
    h('p', { class: 'facts' }, h('span', { class: 'url', text: p.siteUrl })),
    bar,
    h('p', { role: 'status', id: 'status', class: 'status', text: `${p.status === 'queued' ? 'Waiting to start' : 'Scanning'}: ${p.pagesScanned} of ${total || 'unknown'} pages scanned${eta}.` }),
  );
}

function renderFleet(sites: FleetSite[], open: (scanId: string) => void) {
  root.textContent = '';
  root.append(
    h('h1', { text: 'Sites and their latest scans' }),
    h('div', { class: 'scroll' }, h('table', { class: 'pages' },
      h('thead', null, h('tr', null, ...['Site', 'Status', 'Errors', 'Warnings', 'Report'].map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', null, ...sites.map((s) => h('tr', null,
        h('th', { scope: 'row' }, h('span', { class: 'url', text: s.siteUrl })),
        h('td', { text: s.latestScanStatus ?? 'never scanned' }),
        h('td', { text: s.byLevel?.error ?? '–' }),
        h('td', { text: s.byLevel?.warning ?? '–' }),
        h('td', null, s.latestScanId && FINISHED.has(s.latestScanStatus ?? '') ? button(`Open report: ${s.siteUrl}`, 'Open report', () => open(s.latestScanId!)) : '–'),
      ))),
    )),
  );
}

// ---------------------------------------------------------------------------------------------
// wiring: the MCP App, or the page

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows a tool's result to what a person wants to see: the report, the scan's progress, or the sites. */
async function show(result: Record<string, unknown>, host: Host) {
  if (result.app) return renderReport(result.app as ReportView, host);
  const sites = (result.sites ?? result.worstSites) as FleetSite[] | undefined;
  if (Array.isArray(sites)) return renderFleet(sites, (scanId) => void open(scanId, host));
  if (typeof result.scanId === 'string') return open(result.scanId, host);
  status('This result has no report to show.');
}

async function open(scanId: string, host: Host) {
  status('Loading the report…');
  for (;;) {
    const progress = (await host.call('dashboard_get_scan_progress', { scanId })) as unknown as Progress;
    if (progress.status === 'failed') {
      root.textContent = '';
      root.append(h('h1', { text: 'The scan failed' }), h('p', { role: 'status', id: 'status', text: progress.error ?? 'The scan failed.' }));
      return;
    }
    if (progress.finished) break;
    renderProgress(progress);
    await sleep(2000);
  }
  const report = await host.call('dashboard_get_report', { scanId, view: 'app' });
  renderReport(report.app as ReportView, host);
}

/** What the report page embeds: the report (or the scan's progress); the page's own script (page.ts) reads the rest. */
interface PageData {
  view: ReportView | null;
  progress: Progress | null;
  /** Where the screenshots are, relative to the page (a shared page's are under its link). */
  screenshotBase?: string;
}

function embedded(): PageData | null {
  const el = document.getElementById('pactum-data');
  return el?.textContent ? (JSON.parse(el.textContent) as PageData) : null;
}

async function main() {
  const page = embedded();
  if (page) {
    // The report page: everything it needs is in the document; screenshots are files of this server beside it.
    const base = page.screenshotBase;
    const host: Host = {
      call: () => Promise.reject(new Error('not in an MCP host')),
      screenshotSrc: (scanId, id) => Promise.resolve(base ? `${base}${id}` : `${encodeURIComponent(scanId)}/screenshots/${id}`),
      canDraftFixes: false,
    };
    if (page.view) renderReport(page.view, host);
    else if (page.progress) renderProgress(page.progress);
    return;
  }
  const host: Host = {
    canDraftFixes: true,
    async call(name, args) {
      const r = await (await connection).callTool(name, args);
      const text = r.content?.find((c) => c.type === 'text')?.text;
      if (r.isError) throw new Error(text ? ((JSON.parse(text) as { message?: string }).message ?? text) : `${name} failed`);
      return (r.structuredContent ?? (text ? JSON.parse(text) : {})) as Record<string, unknown>;
    },
    async screenshotSrc(scanId, id) {
      const shot = await this.call('dashboard_get_screenshot', { scanId, screenshotId: id });
      return `data:${String(shot.mimeType)};base64,${String(shot.data)}`;
    },
  };
  const toolResult = (result: ToolResult) => {
    const content = result.structuredContent ?? (() => {
      const text = result.content?.find((c) => c.type === 'text')?.text;
      try { return text ? (JSON.parse(text) as Record<string, unknown>) : null; } catch { return null; }
    })();
    if (result.isError || !content) return status('The tool did not return a report.');
    show(content, host).catch((err: unknown) => status(`The report could not be loaded: ${err instanceof Error ? err.message : String(err)}`));
  };
  // The handlers are in place before ui/initialize: a host may send the tool result right after it.
  const connection = connectToHost({ name: 'pactum report', version: '1.0.0' }, { toolResult, hostContextChanged: applyHostContext });
  applyHostContext((await connection).context());
}

// No host answering (the document opened outside a frame, or a host that never answers ui/initialize) is said, not left loading.
main().catch((err: unknown) => status(`The report could not be loaded: ${err instanceof Error ? err.message : String(err)}`));
