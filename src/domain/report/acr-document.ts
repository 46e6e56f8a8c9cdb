/**
 * The Accessibility Conformance Report as a document, on the structure of the VPAT 2.5 INT
 * template (ITI): a header (the product, the report's date, what produced it, the pages covered
 * and the evaluation methods), then the WCAG 2.2 Level A and Level AA tables (acr.ts derives
 * their levels), the Revised Section 508 report and the EN 301 549 report (chapters 9 to 11).
 *
 * Section 508 and EN 301 549 add no evidence of their own: the rows that incorporate WCAG by
 * reference point at the WCAG tables (508's E205.4, 501.1, 504.2, 602.3) or repeat each
 * criterion's level beside its EN 301 549 chapter 9 clause; the rows a scan of web pages cannot
 * speak to (functional performance criteria, hardware, software, documents, support services)
 * are Not Evaluated or Not Applicable, each with its reason. Never Supports without evidence.
 *
 * The HTML is self-contained (one inline stylesheet, no script, no fetch) and is what Chromium
 * prints as the PDF.
 */
import { createHash } from 'node:crypto';
import type { WcagStandard } from '../scan/types.js';
import { CONFORMANCE_TERMS, conformanceTable, type AcrInput, type AcrRow, type Conformance } from './acr.js';

/** The Conformance Level column of a row that incorporates WCAG by reference, as VPAT 2.5 words it. */
export const SEE_WCAG = 'See WCAG 2.x section';

export interface AcrReferenceRow {
  /** The clause or section, e.g. 302.1, 9.1.1.1, 10. */
  section: string;
  title: string;
  conformance: Conformance | typeof SEE_WCAG;
  remarks: string;
}

export interface AcrFacts {
  scanId: string;
  siteUrl: string;
  standard: WcagStandard;
  engine: 'chromium' | 'jsdom' | null;
  finishedAt: string | null;
  /** What produced the report: this server's version, axe-core's, and Chromium's when the scan ran in it and its version is known. */
  versions: { pactum: string; axeCore: string; chromium: string | null };
}

export interface AcrDocument {
  scanId: string;
  product: { name: string; url: string };
  reportDate: string;
  evaluatedAt: string | null;
  producedBy: { pactum: string; axeCore: string; engine: 'chromium' | 'jsdom' | null; chromium: string | null };
  standard: WcagStandard;
  pages: { url: string; checked: boolean; error: string | null }[];
  evaluationMethods: string;
  /** How many criteria of the WCAG tables have each level. */
  summary: Record<Conformance, number>;
  wcag: { levelA: AcrRow[]; levelAA: AcrRow[] };
  section508: { chapter: string; rows: AcrReferenceRow[] }[];
  en301549: { chapter: string; rows: AcrReferenceRow[] }[];
}

const FPC_REASON = 'Functional performance criteria are judged by people using the product with assistive technology; an automated scan does not evaluate them, and no reviewer has assessed them.';
const FPC = [
  ['302.1', 'Without Vision'], ['302.2', 'With Limited Vision'], ['302.3', 'Without Perception of Color'], ['302.4', 'Without Hearing'],
  ['302.5', 'With Limited Hearing'], ['302.6', 'Without Speech'], ['302.7', 'With Limited Manipulation'], ['302.8', 'With Limited Reach and Strength'],
  ['302.9', 'With Limited Language, Cognitive, and Learning Abilities'],
] as const;

const WEB_NOT_SOFTWARE = 'The product is web content, evaluated against WCAG (see the WCAG 2.x tables); it is not platform software or an application that provides these services.';
const NOT_AUTHORING = 'Whether the product lets its users create content for others is a reviewer\'s judgment; no reviewer has assessed it.';
const SUPPORT_NOT_EVALUATED = 'Support documentation and support services were not part of the evaluation: only the web pages listed were checked.';

function section508(): AcrDocument['section508'] {
  const rows = (list: [string, string, AcrReferenceRow['conformance'], string][]) => list.map(([section, title, conformance, remarks]) => ({ section, title, conformance, remarks }));
  return [
    { chapter: 'Chapter 3: Functional Performance Criteria (FPC)', rows: rows(FPC.map(([id, title]) => [id, title, 'Not Evaluated', FPC_REASON])) },
    { chapter: 'Chapter 4: Hardware', rows: rows([['402–415', 'Hardware', 'Not Applicable', 'The product is a web site, not hardware.']]) },
    { chapter: 'Chapter 5: Software', rows: rows([
      ['501.1', 'Scope – Incorporation of WCAG 2.0 AA', SEE_WCAG, 'Web content: Revised Section 508 incorporates WCAG 2.0 Level A and AA by reference (E205.4); the WCAG 2.x tables give each criterion\'s level.'],
      ['502', 'Interoperability with Assistive Technology', 'Not Applicable', WEB_NOT_SOFTWARE],
      ['503', 'Applications', 'Not Applicable', WEB_NOT_SOFTWARE],
      ['504.2', 'Content Creation or Editing (if not authoring tool, enter "not applicable")', SEE_WCAG, `Where the product is an authoring tool, the content it creates is covered by the WCAG 2.x tables. ${NOT_AUTHORING}`],
      ['504.2.1–504.4', 'Authoring Tools', 'Not Evaluated', NOT_AUTHORING],
    ]) },
    { chapter: 'Chapter 6: Support Documentation and Services', rows: rows([
      ['602.2', 'Accessibility and Compatibility Features', 'Not Evaluated', SUPPORT_NOT_EVALUATED],
      ['602.3', 'Electronic Support Documentation', SEE_WCAG, `Electronic support documentation is covered by WCAG (see the WCAG 2.x tables) where it is among the pages listed. ${SUPPORT_NOT_EVALUATED}`],
      ['602.4', 'Alternate Formats for Non-Electronic Support Documentation', 'Not Evaluated', SUPPORT_NOT_EVALUATED],
      ['603.2', 'Information on Accessibility and Compatibility Features', 'Not Evaluated', SUPPORT_NOT_EVALUATED],
      ['603.3', 'Accommodation of Communication Needs', 'Not Evaluated', SUPPORT_NOT_EVALUATED],
    ]) },
  ];
}

function en301549(table: AcrRow[]): AcrDocument['en301549'] {
  const web = table.filter((r) => r.en301549).map((r) => ({ section: r.en301549!, title: `${r.title} (WCAG ${r.criterion})`, conformance: r.conformance, remarks: r.remarks }));
  const beyond = table.filter((r) => !r.en301549).map((r) => r.criterion);
  return [
    { chapter: 'Chapter 9: Web', rows: [
      ...web,
      { section: '9.6', title: 'WCAG conformance requirements', conformance: SEE_WCAG, remarks: `Each clause above has the level of its WCAG criterion. WCAG 2.2 criteria without an EN 301 549 V3.2.1 clause (${beyond.join(', ')}) are in the WCAG 2.x tables only.` },
    ] },
    { chapter: 'Chapter 10: Non-Web Documents', rows: [
      { section: '10.1–10.6', title: 'Non-web documents', conformance: 'Not Evaluated', remarks: 'Only web pages were checked; documents the site links to or offers for download (PDF, office files) were not evaluated.' },
    ] },
    { chapter: 'Chapter 11: Software', rows: [
      { section: '11.1–11.7', title: 'Software', conformance: 'Not Applicable', remarks: 'The product is web content, evaluated under chapter 9; chapter 11 applies to non-web software.' },
      { section: '11.8', title: 'Authoring tools', conformance: 'Not Evaluated', remarks: NOT_AUTHORING },
    ] },
  ];
}

function methods(facts: AcrFacts): string {
  const engine = facts.engine === 'chromium' ? `headless Chromium${facts.versions.chromium ? ` ${facts.versions.chromium}` : ''}` : facts.engine === 'jsdom' ? 'jsdom (no browser rendering)' : 'an engine the scan did not record';
  return [
    `Automated testing of the pages listed with axe-core ${facts.versions.axeCore} and pactum's own checks, in ${engine}, against ${facts.standard}.`,
    'Reviewers\' marks on findings: a finding marked false positive, or a needs-review finding passed by a person, is no failure; an accepted finding still counts as a failure, with the reason in the remarks.',
    'Reviewers\' per-criterion assessments replace the derived level where given.',
    'Automated checks cover part of WCAG: Supports is given only where a check of the criterion ran on every page checked and nothing of it is open; every criterion no check covers and no reviewer assessed is Not Evaluated.',
  ].join(' ');
}

export function acrDocument(facts: AcrFacts, input: AcrInput & { now: string }): AcrDocument {
  const table = conformanceTable(input);
  const summary = Object.fromEntries(CONFORMANCE_TERMS.map((t) => [t, table.filter((r) => r.conformance === t).length])) as Record<Conformance, number>;
  return {
    scanId: facts.scanId,
    product: { name: new URL(facts.siteUrl).host, url: facts.siteUrl },
    reportDate: input.now.slice(0, 10),
    evaluatedAt: facts.finishedAt,
    producedBy: { pactum: facts.versions.pactum, axeCore: facts.versions.axeCore, engine: facts.engine, chromium: facts.versions.chromium },
    standard: facts.standard,
    pages: input.pages.map((p) => ({ url: p.url, checked: !p.error, error: p.error ?? null })),
    evaluationMethods: methods(facts),
    summary,
    wcag: { levelA: table.filter((r) => r.level === 'A'), levelAA: table.filter((r) => r.level === 'AA') },
    section508: section508(),
    en301549: en301549(table),
  };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The document's one stylesheet (its hash is what the page's Content-Security-Policy allows). */
export const ACR_STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0 auto;max-width:70rem;padding:1.5rem}',
  'h1{font-size:1.8rem}h2{font-size:1.4rem;margin-top:2rem}h3{font-size:1.15rem}',
  'table{border-collapse:collapse;width:100%;margin:0.5rem 0 1.5rem}caption{text-align:left;font-weight:600;padding:0.25rem 0}',
  'th,td{border:1px solid #595959;padding:0.35rem 0.5rem;text-align:left;vertical-align:top}thead th{background:#e8e8e8}',
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:0.25rem 1rem}dt{font-weight:600}dd{margin:0}',
  'a{color:#0b4f9c}.level{white-space:nowrap}',
  '@media print{body{max-width:none;padding:0;font-size:11pt}thead{display:table-header-group}tr{break-inside:avoid}}',
].join('\n');
export const ACR_STYLE_HASH = `'sha256-${createHash('sha256').update(ACR_STYLE).digest('base64')}'`;

function conformanceTableHtml(caption: string, rows: AcrRow[]): string {
  const body = rows.map((r) => `<tr><th scope="row">${escape(`${r.criterion} ${r.title}`)} (Level ${r.level}${r.en301549 ? `; EN 301 549 ${r.en301549}` : ''})</th><td class="level">${escape(r.conformance)}</td><td>${escape(r.remarks)}</td></tr>`).join('\n');
  return `<table><caption>${escape(caption)}</caption><thead><tr><th scope="col">Criteria</th><th scope="col">Conformance Level</th><th scope="col">Remarks and Explanations</th></tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function referenceTableHtml(caption: string, rows: AcrReferenceRow[]): string {
  const body = rows.map((r) => `<tr><th scope="row">${escape(`${r.section} ${r.title}`)}</th><td class="level">${escape(r.conformance)}</td><td>${escape(r.remarks)}</td></tr>`).join('\n');
  return `<table><caption>${escape(caption)}</caption><thead><tr><th scope="col">Criteria</th><th scope="col">Conformance Level</th><th scope="col">Remarks and Explanations</th></tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** The report as one HTML document: no script, no external resource, one inline stylesheet (ACR_STYLE). */
export function acrHtml(doc: AcrDocument): string {
  const title = `Accessibility Conformance Report: ${doc.product.name}`;
  const by = doc.producedBy;
  const engine = by.engine === 'chromium' ? `Chromium${by.chromium ? ` ${by.chromium}` : ' (version not recorded)'}` : by.engine ?? 'not recorded';
  const pages = doc.pages.map((p) => `<li>${escape(p.url)}${p.checked ? '' : ` (could not be checked: ${escape(p.error ?? 'no reason recorded')})`}</li>`).join('\n');
  const summary = CONFORMANCE_TERMS.map((t) => `<li>${escape(t)}: ${doc.summary[t]}</li>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<style>${ACR_STYLE}</style>
</head>
<body>
<header><p>VPAT® 2.5 INT structure · WCAG 2.2 · Revised Section 508 · EN 301 549</p></header>
<main>
<h1>${escape(title)}</h1>
<h2 id="about">About the evaluation</h2>
<dl>
<dt>Name of product</dt><dd>${escape(doc.product.name)} (${escape(doc.product.url)})</dd>
<dt>Report date</dt><dd>${escape(doc.reportDate)}</dd>
<dt>Evaluated</dt><dd>${escape(doc.evaluatedAt ?? 'not recorded')} (scan ${escape(doc.scanId)})</dd>
<dt>Produced by</dt><dd>pactum ${escape(by.pactum)}, axe-core ${escape(by.axeCore)}, engine ${escape(engine)}</dd>
<dt>Standard tested</dt><dd>${escape(doc.standard)}</dd>
<dt>Evaluation methods used</dt><dd>${escape(doc.evaluationMethods)}</dd>
</dl>
<h3>Pages covered (${doc.pages.length})</h3>
<ul>
${pages}
</ul>
<h2 id="terms">Terms</h2>
<p>Supports: the functionality meets the criterion without known defects. Partially Supports: some functionality does not meet it. Does Not Support: the majority of functionality does not meet it. Not Applicable: the criterion is not relevant to the product. Not Evaluated: the product has not been evaluated against the criterion.</p>
<p>WCAG 2.2 criteria, Levels A and AA:</p>
<ul>${summary}</ul>
<h2 id="wcag">WCAG 2.x Report</h2>
<p>Tables 1 and 2 also document conformance with EN 301 549 chapter 9 (web) and Revised Section 508 (E205.4 web content, 501.1, 504.2, 602.3).</p>
${conformanceTableHtml('Table 1: Success Criteria, Level A', doc.wcag.levelA)}
${conformanceTableHtml('Table 2: Success Criteria, Level AA', doc.wcag.levelAA)}
<h2 id="section508">Revised Section 508 Report</h2>
<p>Web content (E205.4) incorporates WCAG 2.0 Level A and AA by reference: its level is that of the WCAG 2.x tables above.</p>
${doc.section508.map((c) => referenceTableHtml(c.chapter, c.rows)).join('\n')}
<h2 id="en301549">EN 301 549 Report</h2>
${doc.en301549.map((c) => referenceTableHtml(c.chapter, c.rows)).join('\n')}
</main>
<footer><p>VPAT® is a registered service mark of the Information Technology Industry Council (ITI).</p></footer>
</body>
</html>
`;
}
