/**
 * A person's confirmation before a call whose effect cannot be taken back quietly: revoking a
 * personal token, deactivating a user, queuing a coordinated fix across the fleet. Asked as a
 * multi round-trip (MCP 2026-07-28): the first call answers an input-required result holding an
 * elicitation (`confirm`) and a signed request state; the client asks the person and calls again
 * with the answer and the state. Only a client that declares elicitation in the request's
 * `_meta` is asked; any other call runs as it always has.
 *
 * The request state comes back from the client, so it is checked before anything reads it:
 * its HMAC (the SDK's codec, under a key every instance shares), its expiry, the method, and a
 * keyed digest of the caller, the tool and the arguments, so that a state minted for one call is
 * refused on any other (another user, another tool, other arguments); and a confirmed state runs
 * its call once: its id is recorded (in the database every instance shares) when it is used.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, createRequestStateCodec, inputRequired, inputResponse, ProtocolError, ProtocolErrorCode, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { ToolName } from '../../generated/tools.js';
import type { Identity } from '../domain/access/identity.js';
import type { Db } from '../db/knex.js';
import { isUniqueViolation } from '../db/users.js';

/** The key of the confirmation among a result's `inputRequests` (and the retry's `inputResponses`). */
export const CONFIRM = 'confirm';

/** How long a person has to answer: a state older than this is refused and the call must start over. */
export const CONFIRMATION_TTL_SECONDS = 300;

type Args = Record<string, unknown>;

/** What the person is asked before each tool's call, or null when this call needs no confirmation. */
const QUESTIONS: Partial<Record<ToolName, (args: Args) => string | null>> = {
  dashboard_revoke_user_token: (a) => `Revoke the personal token ${String(a.token)} of user ${String(a.userId)}? Whatever uses it stops working at once.`,
  dashboard_update_user: (a) =>
    a.active === false ? `Deactivate user ${String(a.userId)}? Their sessions, bearer tokens and personal tokens end at once; reactivation does not bring the personal tokens back.` : null,
  dashboard_queue_bulk_fix: (a) =>
    `Queue a coordinated fix of WCAG ${String(a.wcagCriterion)} on ${Array.isArray(a.siteIds) ? `the ${a.siteIds.length} site(s) named` : 'every site of the fleet'} whose latest completed scan has such issues? Each gets a queued pull request.`,
};

/** Whether a call of `tool` may have to be confirmed (its question depends on the arguments). */
export const mayAskConfirmation = (tool: string): boolean => Object.hasOwn(QUESTIONS, tool);

/** The question a call must have confirmed, or null. */
export const confirmationQuestion = (tool: ToolName, args: Args): string | null => QUESTIONS[tool]?.(args) ?? null;

/** The form the person answers: one required boolean. */
const CONFIRM_SCHEMA: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Confirm', description: 'Yes: do it. No: change nothing.', default: false } },
  required: ['confirm'],
};

/** What a confirmation state carries: the digest of the call it was minted for, and its own id. */
interface ConfirmationState {
  call: string;
  id: string;
}

/** What a call's confirmation stands at. */
export type ConfirmationAnswer = 'confirmed' | 'declined' | InputRequiredResult;

/** JSON with object keys in order, so that a call digests the same however its client ordered the arguments. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface Confirmations {
  /** For ServerOptions.requestState.verify: refuses a state whose signature, expiry or method does not hold. */
  verify(state: string, ctx: ServerContext): Promise<unknown>;
  /**
   * Refuses (JSON-RPC -32602) a verified state that was minted for another call (another caller,
   * tool or arguments), or one whose confirmation was already used; uses it when the retry
   * carries the person's confirmation.
   */
  checkState(ctx: ServerContext, caller: Identity, tool: string, args: unknown): Promise<void>;
  /** Where this call's confirmation stands: confirmed, declined (or cancelled), or the question to ask. */
  answer(ctx: ServerContext, caller: Identity, tool: ToolName, args: Args, question: string): Promise<ConfirmationAnswer>;
}

const confirmed = (ctx: ServerContext) => {
  const response = inputResponse(ctx.mcpReq.inputResponses, CONFIRM);
  return response.kind === 'elicit' && response.action === 'accept' && response.content?.confirm === true;
};

/** `key`: at least 32 bytes that every instance serving the endpoint shares; `db`: where used confirmations are recorded. */
export function createConfirmations(key: Buffer, db: Db): Confirmations {
  const stateKey = createHmac('sha256', key).update('pactum mcp request state v1').digest();
  const digestKey = createHmac('sha256', key).update('pactum mcp confirmed call v1').digest();
  const codec = createRequestStateCodec<ConfirmationState>({ key: stateKey, ttlSeconds: CONFIRMATION_TTL_SECONDS, bind: (ctx) => ctx.mcpReq.method });
  // Keyed, so that the state (signed, not encrypted) reveals nothing of the arguments, a password among them.
  const digest = (caller: Identity, tool: string, args: unknown) => createHmac('sha256', digestKey).update(canonical([caller.subject, caller.orgId, tool, args ?? {}])).digest('base64url');

  return {
    verify: (state, ctx) => codec.verify(state, ctx),

    async checkState(ctx, caller, tool, args) {
      const state = ctx.mcpReq.requestState<ConfirmationState>();
      if (state === undefined) return;
      if (typeof state !== 'object' || state === null || state.call !== digest(caller, tool, args) || typeof state.id !== 'string') {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The requestState was issued for another call (another caller, tool or arguments); call the tool again without it');
      }
      if (!confirmed(ctx)) return;
      const now = new Date();
      await db('mcp_confirmations').where('expires_at', '<', now.toISOString()).delete();
      try {
        // A state lives CONFIRMATION_TTL_SECONDS at most; its row, as long.
        await db('mcp_confirmations').insert({ id: state.id, expires_at: new Date(now.getTime() + CONFIRMATION_TTL_SECONDS * 1000).toISOString() });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The requestState was already used to confirm this call; call the tool again without it to be asked anew');
      }
    },

    async answer(ctx, caller, tool, args, question) {
      // Only a state that verified, belongs to this call and was not used (checkState) makes an answer count.
      if (ctx.mcpReq.requestState<ConfirmationState>() !== undefined) {
        if (confirmed(ctx)) return 'confirmed';
        if (inputResponse(ctx.mcpReq.inputResponses, CONFIRM).kind === 'elicit') return 'declined';
      }
      // First round, or a retry without the answer: ask (again).
      return inputRequired({
        inputRequests: { [CONFIRM]: inputRequired.elicit({ mode: 'form', message: question, requestedSchema: CONFIRM_SCHEMA }) },
        requestState: await codec.mint({ call: digest(caller, tool, args), id: randomUUID() }, ctx),
      });
    },
  };
}

/** Whether a 2026-07-28 request's `_meta` declares form elicitation (an empty `elicitation` means form). */
export function declaresFormElicitation(ctx: ServerContext): boolean {
  return envelopeDeclaresFormElicitation(ctx.mcpReq.envelope);
}

/** The same, read from a request's `_meta` (whose envelope keys the SDK lifts into `ctx.mcpReq.envelope`). */
export function envelopeDeclaresFormElicitation(envelope: unknown): boolean {
  const capabilities = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  if (!elicitation || typeof elicitation !== 'object') return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}
