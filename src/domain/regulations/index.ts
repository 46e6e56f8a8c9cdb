/**
 * The embedded regulation data set (data/, compiled from public sources listed in
 * data/SOURCES.md): jurisdictions, regulations and the WCAG 2.0/2.1/2.2 success criteria, with
 * the lookups the tools need. Knows nothing of HTTP or MCP.
 */
import type { components } from '../../../generated/types/dashboard.js';
import jurisdictionData from './data/jurisdictions.json' with { type: 'json' };
import regulationData from './data/regulations.json' with { type: 'json' };
import criteriaData from './data/wcag-criteria.json' with { type: 'json' };

type S = components['schemas'];
export type Regulation = S['regulation'];
export type Jurisdiction = S['jurisdiction'];
export type WcagCriterion = S['wcag-criterion'];
export type LegalContext = S['legal-context'];
type WcagLevel = S['wcag-level'];

const LEVEL_RANK: Record<WcagLevel, number> = { A: 1, AA: 2, AAA: 3 };
const VERSION_RANK: Record<string, number> = { '2.0': 0, '2.1': 1, '2.2': 2 };

export const regulations: readonly Regulation[] = (regulationData as Omit<Regulation, 'source'>[]).map((r) => ({ ...r, source: 'embedded' as const }));
export const criteria: readonly WcagCriterion[] = criteriaData as WcagCriterion[];
const jurisdictionRows = jurisdictionData as Omit<Jurisdiction, 'regulationCount'>[];

const regulationById = new Map(regulations.map((r) => [r.id, r]));
const criterionById = new Map(criteria.map((c) => [c.id, c]));
const children = new Map<string, string[]>();
for (const j of jurisdictionRows) if (j.parentId) children.set(j.parentId, [...(children.get(j.parentId) ?? []), j.id]);

/** A jurisdiction and all its sub-divisions (EU → member states; US → states → cities). */
export function withDescendants(id: string): Set<string> {
  const out = new Set<string>([id]);
  for (const c of children.get(id) ?? []) for (const d of withDescendants(c)) out.add(d);
  return out;
}

export const jurisdictions: readonly Jurisdiction[] = jurisdictionRows.map((j) => ({
  ...j,
  regulationCount: regulations.filter((r) => r.jurisdictionId === j.id).length,
}));
const jurisdictionIds = new Set(jurisdictions.map((j) => j.id));

export function findJurisdictions(f: { query?: string; parentId?: string; type?: Jurisdiction['type'] }): Jurisdiction[] {
  const q = f.query?.toLowerCase();
  return jurisdictions.filter(
    (j) => (!f.parentId || j.parentId === f.parentId) && (!f.type || j.type === f.type) && (!q || j.id.toLowerCase().includes(q) || j.name.toLowerCase().includes(q)),
  );
}

/** Regulations of a jurisdiction (sub-divisions included) whose text holds every word of `query`. */
export function findRegulations(f: { jurisdiction?: string; query?: string; status?: Regulation['status']; scope?: Regulation['scope'] }): Regulation[] {
  const within = f.jurisdiction ? withDescendants(f.jurisdiction.toUpperCase()) : null;
  const words = (f.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return regulations.filter((r) => {
    if (within && !within.has(r.jurisdictionId)) return false;
    if (f.status && r.status !== f.status) return false;
    if (f.scope && r.scope !== f.scope) return false;
    if (!words.length) return true;
    const text = `${r.id} ${r.name} ${r.shortName} ${r.reference} ${r.description}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** Case-sensitive, as the contract says: "eu-eaa" is not EU-EAA. */
export const findRegulation = (id: string) => regulationById.get(id);
export const isJurisdiction = (id: string) => jurisdictionIds.has(id);

/** Criteria in force in a WCAG version (introduced by then and not yet removed), by level and principle. */
export function findCriteria(f: { version?: '2.0' | '2.1' | '2.2'; level?: WcagLevel; principle?: WcagCriterion['principle'] }): WcagCriterion[] {
  return criteria.filter((c) => {
    if (f.version && !inForce(c, f.version)) return false;
    if (f.level && c.level !== f.level) return false;
    return !f.principle || c.principle === f.principle;
  });
}

function inForce(c: WcagCriterion, version: string): boolean {
  const v = VERSION_RANK[version]!;
  return VERSION_RANK[c.version]! <= v && (!c.removedIn || VERSION_RANK[c.removedIn]! > v);
}

/**
 * The criterion a caller means: "1.1.1", "SC 1.4.3", "WCAG 2.4.4", "1.1.1 Non-text Content" or
 * "Non-text Content" (title, case-insensitive). Undefined when none matches.
 */
export function resolveCriterion(text: string): WcagCriterion | undefined {
  const number = /(?:^|[^\d.])([1-4]\.\d{1,2}\.\d{1,2})(?![\d.])/.exec(` ${text}`);
  if (number) return criterionById.get(number[1]!);
  const title = text.trim().toLowerCase().replace(/^(wcag|sc|success criterion)\s*/, '');
  return criteria.find((c) => c.title.toLowerCase() === title);
}

/** Whether a regulation, through the WCAG version and level it adopts, requires a criterion. */
export function requires(r: Regulation, c: WcagCriterion): boolean {
  if (!r.wcagVersion || !r.wcagLevel) return false;
  return inForce(c, r.wcagVersion) && LEVEL_RANK[c.level] <= LEVEL_RANK[r.wcagLevel];
}

/** For each jurisdiction, the regulations there (sub-divisions included) that require the criterion. */
export function legalContext(c: WcagCriterion, jurisdictionIdsAsked: string[], source: readonly Regulation[] = regulations): LegalContext[] {
  return jurisdictionIdsAsked.map((asked) => {
    const id = asked.trim().toUpperCase();
    if (!jurisdictionIds.has(id)) return { jurisdiction: asked, regulations: [], note: `No jurisdiction ${asked} in the data set; see dashboard_list_jurisdictions` };
    const within = withDescendants(id);
    const matching = source
      .filter((r) => within.has(r.jurisdictionId) && r.status !== 'repealed' && requires(r, c))
      // The jurisdiction's own laws first, then its sub-divisions', each by enforcement date.
      .sort((a, b) => Number(a.jurisdictionId !== id) - Number(b.jurisdictionId !== id) || String(a.enforcementDate).localeCompare(String(b.enforcementDate)));
    return {
      jurisdiction: id,
      regulations: matching.map((r) => ({ id: r.id, name: r.name, enforcementDate: r.enforcementDate, wcagVersion: r.wcagVersion!, wcagLevel: r.wcagLevel!, url: r.url })),
      ...(matching.length ? {} : { note: `No regulation in ${id} adopts a WCAG version and level that includes ${c.id}` }),
    };
  });
}
