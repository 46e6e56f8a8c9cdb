/**
 * The exports as the code hosts read them: SARIF that GitHub code scanning accepts (every
 * constraint of its "SARIF support for code scanning" page that applies, test/helpers/code-hosts.ts),
 * and pa11y-ci's JSON as GitLab's merge-request accessibility widget reads it.
 */
import { describe, expect, it } from 'vitest';
import { exportReport, GITHUB_MAX_RESULTS, type ExportMeta } from '../../../src/domain/report/exports.js';
import { artifactUri, parseSourceMapping, SourceMappingError } from '../../../src/domain/report/locations.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';
import { VERSION } from '../../../src/ground/version.js';
import { GITHUB_CONSTRAINTS, githubSarifProblems, gitlabAccessibilityProblems } from '../../helpers/code-hosts.js';

const issue = (over: Partial<Issue>): Issue => ({
  code: 'image-alt', wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error', impact: 'critical', message: 'Images must have alternative text', selector: 'img', context: '<img src="a.png">', helpUrl: 'https://dequeuniversity.com/rules/axe/4.14/image-alt', ...over,
});
const pages: PageReport[] = [
  { url: 'https://www.example.com/docs/', title: 'Docs', issueCount: 2, notEvaluated: [], issues: [issue({}), issue({ type: 'warning', code: 'pactum-link-purpose', wcagCriterion: '2.4.4', wcagCriteria: ['2.4.4'], impact: 'moderate', message: 'Needs review: the link text', selector: 'a' })] },
  { url: 'http://localhost:8080/guide/intro.html?lang=en#top', title: 'Intro', issueCount: 1, notEvaluated: [], issues: [issue({ selector: 'main > img' })] },
  { url: 'https://www.example.com/bad', title: null, issueCount: 0, issues: [], error: 'https://www.example.com/bad answered HTTP 500', notEvaluated: [] },
  { url: 'https://www.example.com/clean', title: 'Clean', issueCount: 0, issues: [], notEvaluated: [] },
];
const meta = (scanId = 'scn_1', finishedAt = '2026-12-01T10:00:00.000Z'): ExportMeta => ({ scanId, siteUrl: 'https://www.example.com/', standard: 'WCAG2AA', engine: 'chromium', finishedAt, notEvaluated: [] });

type Sarif = {
  runs: {
    tool: { driver: { version: string; semanticVersion: string; informationUri: string } };
    results: { ruleId: string; message: { text: string }; properties: { pageUrl: string }; partialFingerprints: Record<string, string>; locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[];
    invocations: { toolExecutionNotifications: { message: { text: string }; locations?: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[];
    properties: { resultsOmitted: number };
  }[];
};
const sarif = (m = meta(), sourceMap: string[] = []) => exportReport('sarif', m, pages, { sourceMap: sourceMap.map(parseSourceMapping) });

describe('SARIF for GitHub code scanning', () => {
  it(`meets every constraint of GitHub's page that applies (${GITHUB_CONSTRAINTS.length} checked)`, () => {
    expect(githubSarifProblems(sarif())).toEqual([]);
    expect(githubSarifProblems(sarif(meta(), ['https://www.example.com/docs/=site/docs/']))).toEqual([]);
  });

  it('the checker itself refuses what GitHub refuses: a location with a scheme, no primaryLocationLineHash, a run of 25,001 results', () => {
    const log = JSON.parse(sarif()) as Sarif;
    log.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri = 'https://www.example.com/docs/';
    delete log.runs[0]!.results[1]!.partialFingerprints.primaryLocationLineHash;
    const problems = githubSarifProblems(JSON.stringify(log));
    expect(problems.some((p) => /has a scheme/.test(p))).toBe(true);
    expect(problems.some((p) => /primaryLocationLineHash missing/.test(p))).toBe(true);
    const many = JSON.parse(sarif()) as Sarif;
    many.runs[0]!.results = Array.from({ length: GITHUB_MAX_RESULTS + 1 }, () => log.runs[0]!.results[2]!);
    expect(githubSarifProblems(JSON.stringify(many)).some((p) => /over 25,000/.test(p))).toBe(true);
  });

  it('locates pages by scheme-less host/path by default, keeping the page URL in the message and properties', () => {
    const run = (JSON.parse(sarif()) as Sarif).runs[0]!;
    expect(run.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation.uri)).toEqual(['www.example.com/docs/', 'www.example.com/docs/', 'localhost%3A8080/guide/intro.html']);
    expect(run.results[2]!.properties.pageUrl).toBe('http://localhost:8080/guide/intro.html?lang=en#top');
    expect(run.results[2]!.message.text).toContain('Page: http://localhost:8080/guide/intro.html?lang=en#top');
    const notification = run.invocations[0]!.toolExecutionNotifications[0]!;
    expect(notification.locations![0]!.physicalLocation.artifactLocation.uri).toBe('www.example.com/bad');
    expect(notification.message.text).toContain('https://www.example.com/bad');
  });

  it('locates pages in the repository where a source mapping says, the longest prefix first', () => {
    const run = (JSON.parse(sarif(meta(), ['https://www.example.com/=site/', 'https://www.example.com/docs/=content/docs'])) as Sarif).runs[0]!;
    expect(run.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation.uri)).toEqual(['content/docs/index.html', 'content/docs/index.html', 'localhost%3A8080/guide/intro.html']);
    const map = [parseSourceMapping('https://example.com/docs=site/docs/')];
    expect(artifactUri('https://example.com/docs/a/b.html', map)).toBe('site/docs/a/b.html');
    expect(artifactUri('https://example.com/docs-old/a.html', map)).toBe('example.com/docs-old/a.html');
    for (const bad of ['site/', 'ftp://x/=site/', 'https://x/=../up', 'https://x/=/abs', 'https://x/=C:/x']) expect(() => parseSourceMapping(bad), bad).toThrow(SourceMappingError);
  });

  it('states the tool: its version and where it is described', () => {
    const driver = (JSON.parse(sarif()) as Sarif).runs[0]!.tool.driver;
    expect(driver).toMatchObject({ version: VERSION, semanticVersion: VERSION });
    expect(driver.informationUri).toMatch(/^https:\/\//);
  });

  it('gives each finding a fingerprint that another scan of the same finding repeats, and another element does not', () => {
    const prints = (text: string) => (JSON.parse(text) as Sarif).runs[0]!.results.map((r) => r.partialFingerprints);
    const first = prints(sarif(meta('scn_1', '2026-12-01T10:00:00.000Z')));
    expect(prints(sarif(meta('scn_2', '2026-12-02T10:00:00.000Z')))).toEqual(first);
    expect(new Set(first.map((f) => f.primaryLocationLineHash)).size).toBe(first.length);
  });

  it('lists at most 25,000 results a run, counts the rest, and stays under 10 MB gzip-compressed', () => {
    const big: PageReport[] = Array.from({ length: 26 }, (_, n) => ({
      url: `https://www.example.com/p${n}`, title: null, issueCount: 1000, notEvaluated: [],
      issues: Array.from({ length: 1000 }, (_, i) => issue({ selector: `#e${i}`, context: `<img id="e${i}" src="photo-${n}-${i}.jpg">` })),
    }));
    const text = exportReport('sarif', meta(), big);
    const run = (JSON.parse(text) as Sarif).runs[0]!;
    expect(run.results).toHaveLength(GITHUB_MAX_RESULTS);
    expect(run.properties.resultsOmitted).toBe(1000);
    expect(run.invocations[0]!.toolExecutionNotifications.at(-1)!.message.text).toMatch(/^1000 more results were left out/);
    expect(githubSarifProblems(text)).toEqual([]);
  });
});

describe("GitLab's accessibility report (pa11y-ci JSON)", () => {
  const pa11y = () => JSON.parse(exportReport('pa11y', meta(), pages)) as { total: number; passes: number; errors: number; results: Record<string, { code: string; runner: string; type: string }[]> };

  it('has the shape GitLab reads, its totals as GitLab counts them', () => {
    expect(gitlabAccessibilityProblems(exportReport('pa11y', meta(), pages))).toEqual([]);
    expect(gitlabAccessibilityProblems('{"results":{"":[]},"total":1,"passes":1,"errors":0}')).not.toEqual([]);
  });

  it('lists errors only (GitLab counts every entry as one), a page that could not be checked as one entry, and a clean page as a pass', () => {
    const r = pa11y();
    expect(Object.keys(r.results)).toEqual(pages.map((p) => p.url));
    expect(r.results['https://www.example.com/docs/']!.map((e) => `${e.type}:${e.code}:${e.runner}`)).toEqual(['error:image-alt:axe']);
    expect(r.results['https://www.example.com/bad']!.map((e) => e.code)).toEqual(['pactum.page-error']);
    expect(r.results['https://www.example.com/clean']).toEqual([]);
    expect({ total: r.total, passes: r.passes, errors: r.errors }).toEqual({ total: 4, passes: 1, errors: 3 });
  });
});
