/**
 * dashboard_generate_fix: a remediation draft for one WCAG issue. A connected llm service is
 * asked first (POST {url}/api/v1/fix-drafts, see docs/llm-service.md); on any failure, and
 * without one, the deterministic engine (domain/fix) drafts it. Either way the draft carries the
 * diff, the legal context per jurisdiction, and the reminder that a human must review it.
 * Nothing is written or committed.
 */
import { callService, requestToken, type Credentials } from '../../domain/connections/client.js';
import type { FixResult } from '../../domain/fix/index.js';
import { legalContext, resolveCriterion, type WcagCriterion } from '../../domain/regulations/index.js';
import { computed } from '../compute-call.js';
import { ToolFailure, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

const DISCLAIMER =
  'Draft for human review: check it in context before applying it. It changed no file and committed nothing. The legal context is information, not legal advice.';

interface FixInput { criterion: WcagCriterion; issueMessage: string; htmlContext: string; cssContext?: string; platform: 'html' | 'cms-block-editor' }

/** The llm service's draft, or null (with the reason logged) to fall back to the engine. */
async function askLlm(s: Pick<McpDeps, 'config'>, ctx: ToolContext, c: Credentials, input: FixInput): Promise<FixResult | null> {
  const timeoutMs = s.config.serviceTimeoutMs;
  try {
    const token = await requestToken(c, timeoutMs);
    const res = await callService(c, token, 'api/v1/fix-drafts', {
      method: 'POST',
      timeoutMs,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wcagCriterion: input.criterion.id, criterionTitle: input.criterion.title, issueMessage: input.issueMessage, htmlContext: input.htmlContext, cssContext: input.cssContext, platform: input.platform }),
    });
    if (!res.ok) throw new Error(`fix-drafts answered ${res.status}`);
    const body = (await res.json()) as Partial<FixResult>;
    if (typeof body.fixedHtml !== 'string' || typeof body.explanation !== 'string' || !['low', 'medium', 'high'].includes(String(body.effort))) {
      throw new Error('fix-drafts answered without fixedHtml, explanation and effort');
    }
    // The draft is diffed against the snippet: one far longer than any fix of it is not one.
    const longest = 2 * s.config.fixMaxContextChars;
    if (body.fixedHtml.length > longest || (typeof body.fixedCss === 'string' && body.fixedCss.length > longest)) {
      throw new Error(`fix-drafts answered a draft longer than ${longest} characters`);
    }
    return { fixedHtml: body.fixedHtml, fixedCss: typeof body.fixedCss === 'string' ? body.fixedCss : undefined, explanation: body.explanation, effort: body.effort!, placeholders: [] };
  } catch (err) {
    ctx.log.warn({ reason: (err as Error).message }, 'llm service failed; drafting with the deterministic engine');
    return null;
  }
}

/** Drafting time grows with the markup: past FIX_MAX_CONTEXT_CHARS (at most the schema's maxLength) the call is refused. */
function refuseOversized(s: Pick<McpDeps, 'config'>, contexts: Record<'htmlContext' | 'cssContext', string | undefined>): void {
  const limit = s.config.fixMaxContextChars;
  for (const [name, value] of Object.entries(contexts)) {
    if (value !== undefined && value.length > limit) {
      throw new ToolFailure('too_large', `${name} has ${value.length} characters; this server drafts fixes for at most ${limit} (FIX_MAX_CONTEXT_CHARS). Send the element and less of its surroundings.`);
    }
  }
}

/** Drafting walks the snippet's tree, so its work grows with the elements and their nesting: both are bounded. */
function overBudget({ limit, max, found }: { limit: 'elements' | 'depth'; max: number; found: number }): string {
  return limit === 'elements'
    ? `htmlContext has more than ${max} elements; this server drafts fixes for at most ${max} (FIX_MAX_ELEMENTS). Send the element and less of its surroundings.`
    : `htmlContext nests elements ${found} deep (counting <html> and <body>); this server drafts fixes for at most ${max} (FIX_MAX_DEPTH). Send the element and less of its surroundings.`;
}

export function fixTools(s: Pick<McpDeps, 'compute' | 'config' | 'connections'>): Pick<ToolHandlers, 'dashboard_generate_fix'> {
  return {
    async dashboard_generate_fix({ wcagCriterion, issueMessage, htmlContext, cssContext, jurisdictions, platform }, ctx) {
      const criterion = resolveCriterion(wcagCriterion);
      if (!criterion) throw new ToolFailure('invalid_arguments', `Unknown WCAG success criterion "${wcagCriterion}"; give its number (1.1.1) or its name (Non-text Content)`);
      refuseOversized(s, { htmlContext, cssContext });
      const input: FixInput = { criterion, issueMessage, htmlContext, cssContext, platform: platform! };

      const llm = await s.connections.credentials(ctx.caller.orgId, 'llm');
      let engine: 'llm' | 'deterministic' = 'deterministic';
      let draft = llm ? await askLlm(s, ctx, llm, input) : null;
      let diff: string;
      // Drafting and diffing cost grows with the markup (seconds at the cap): both run in the compute pool.
      if (draft) {
        engine = 'llm';
        diff = await computed(s, ctx, { kind: 'fix-diff', sides: { htmlBefore: htmlContext, htmlAfter: draft.fixedHtml, cssBefore: cssContext, cssAfter: draft.fixedCss } }, 'diffing the draft');
      } else {
        const budget = s.config.fixBudget;
        const outcome = await computed(s, ctx, { kind: 'fix', input: { criterionId: criterion.id, issueMessage, htmlContext, cssContext, platform: platform! }, budget }, 'drafting the fix');
        if (outcome.kind === 'over-budget') throw new ToolFailure('invalid_arguments', overBudget(outcome));
        if (outcome.kind === 'unsupported') {
          throw new ToolFailure(
            'invalid_arguments',
            `No deterministic recipe for ${criterion.id} ${criterion.title}; recipes exist for ${outcome.supported.join(', ')}. Connect an llm service (dashboard_create_service_connection) to draft others.`,
          );
        }
        ({ draft, diff } = outcome);
      }
      return {
        wcagCriterion: `${criterion.id} ${criterion.title}`,
        fixedHtml: draft.fixedHtml,
        ...(draft.fixedCss !== undefined ? { fixedCss: draft.fixedCss } : {}),
        diff,
        explanation: draft.explanation,
        effort: draft.effort,
        legalContext: legalContext(criterion, jurisdictions!),
        disclaimer: DISCLAIMER,
        engine,
        platform: platform!,
        placeholders: draft.placeholders,
      };
    },
  };
}
