/**
 * The monitoring tools: a site's schedule (set, list, delete) and the org's webhooks (create,
 * list, delete, and each one's deliveries). A schedule or webhook of another org is not_found,
 * like a missing one. A webhook's secret is in the answer of its creation and nowhere else.
 */
import { newId } from '../../ground/ids.js';
import { hasCredentials } from '../../domain/connections/service-url.js';
import { CronError, checkCron, nextRun } from '../../domain/monitoring/cron.js';
import { newWebhookSecret } from '../../domain/monitoring/signature.js';
import { refusedHost } from '../../domain/monitoring/post-webhook.js';
import {
  countSchedules, countWebhooks, deliveriesOf, recentRuns, schedulesOf, toSchedule, toWebhook, webhooksOf, type ScheduleRow, type WebhookRow,
} from '../../db/monitoring.js';
import { ToolFailure, inScope, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';
import { target } from './scans.js';
import { webhookSecretContext } from '../../monitoring/monitor.js';

type Deps = Pick<McpDeps, 'config' | 'db' | 'secrets'>;


async function ownSchedule(s: Deps, ctx: ToolContext, scheduleId: string): Promise<ScheduleRow> {
  const row = await s.db<ScheduleRow>('monitor_schedules').where({ id: scheduleId }).first();
  if (!row || !inScope(ctx.caller, row.org_id)) throw new ToolFailure('not_found', `No schedule ${scheduleId} in this organization`);
  return row;
}

async function ownWebhook(s: Deps, ctx: ToolContext, webhookId: string): Promise<WebhookRow> {
  const row = await s.db<WebhookRow>('webhooks').where({ id: webhookId }).first();
  if (!row || !inScope(ctx.caller, row.org_id)) throw new ToolFailure('not_found', `No webhook ${webhookId} in this organization`);
  return row;
}

export function monitoringTools(s: Deps): Pick<
  ToolHandlers,
  | 'dashboard_set_schedule'
  | 'dashboard_list_schedules'
  | 'dashboard_delete_schedule'
  | 'dashboard_create_webhook'
  | 'dashboard_list_webhooks'
  | 'dashboard_delete_webhook'
  | 'dashboard_list_webhook_deliveries'
> {
  const { config, db } = s;
  return {
    async dashboard_set_schedule({ siteUrl, cron, standard, scanMode, maxPages, concurrency, enabled }, ctx) {
      const url = await target(s, siteUrl);
      try {
        checkCron(cron, config.monitor.minIntervalSeconds);
      } catch (err) {
        if (err instanceof CronError) throw new ToolFailure('invalid_arguments', err.message, [{ path: '/cron', message: err.message }]);
        throw err;
      }
      const orgId = ctx.caller.orgId;
      const now = new Date();
      const next = enabled === false ? null : (nextRun(cron, now)?.toISOString() ?? null);
      const fields = {
        cron: cron.trim(), standard: standard!, scan_mode: scanMode!, max_pages: scanMode === 'single' ? 1 : maxPages!, concurrency: concurrency!,
        enabled: enabled !== false, next_run_at: next, updated_at: now.toISOString(),
      };
      const existing = await db<ScheduleRow>('monitor_schedules').where({ org_id: orgId, site_url: url.href }).first();
      let id: string;
      if (existing) {
        id = existing.id;
        await db('monitor_schedules').where({ id }).update(fields);
      } else {
        const most = config.monitor.maxSchedulesPerOrg;
        if ((await countSchedules(db, orgId)) >= most) {
          throw new ToolFailure('rate_limited', `This organization has ${most} schedules, the most it may have (MONITOR_MAX_SCHEDULES_PER_ORG); delete one first`, undefined, 3600);
        }
        id = newId('sch');
        await db('monitor_schedules')
          .insert({ id, org_id: orgId, site_url: url.href, ...fields, created_by: ctx.caller.subject, created_at: now.toISOString() })
          .onConflict(['org_id', 'site_url'])
          .merge(fields);
        id = (await db<ScheduleRow>('monitor_schedules').where({ org_id: orgId, site_url: url.href }).first('id'))!.id;
      }
      const row = (await db<ScheduleRow>('monitor_schedules').where({ id }).first())!;
      return toSchedule(row, await recentRuns(db, id));
    },

    async dashboard_list_schedules(_input, ctx) {
      const rows = await schedulesOf(db, ctx.caller.orgId);
      const out = [];
      for (const row of rows) out.push(toSchedule(row, await recentRuns(db, row.id)));
      return { schedules: out };
    },

    async dashboard_delete_schedule({ scheduleId }, ctx) {
      const row = await ownSchedule(s, ctx, scheduleId);
      await db.transaction(async (tx) => {
        await tx('monitor_runs').where({ schedule_id: row.id }).delete();
        await tx('monitor_schedules').where({ id: row.id }).delete();
      });
      return { scheduleId: row.id, deleted: true as const };
    },

    async dashboard_create_webhook({ url, events }, ctx) {
      if (hasCredentials(url)) throw new ToolFailure('invalid_arguments', 'url contains a user name or password; give the url without them (each delivery is signed with the webhook\'s secret instead)');
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new ToolFailure('invalid_arguments', 'url is not a URL');
      }
      const refused = await refusedHost(parsed.href, { allowPrivateNetworks: config.outboundAllowPrivateNetworks });
      if (refused) {
        throw new ToolFailure('invalid_arguments', `${refused}; webhooks to private networks are refused (an operator can allow them with OUTBOUND_ALLOW_PRIVATE_NETWORKS=true)`);
      }
      const orgId = ctx.caller.orgId;
      if ((await countWebhooks(db, orgId)) >= config.webhooks.perOrg) {
        throw new ToolFailure('rate_limited', `This organization has ${config.webhooks.perOrg} webhooks, the most it may have (WEBHOOKS_PER_ORG); delete one first`, undefined, 3600);
      }
      const id = newId('whk');
      const secret = newWebhookSecret();
      const row: WebhookRow = {
        id, org_id: orgId, url: parsed.href, secret_sealed: s.secrets.seal(secret, webhookSecretContext(id)), events: JSON.stringify(events ?? ['findings.new']),
        enabled: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0, created_by: ctx.caller.subject, created_at: new Date().toISOString(),
      };
      await db('webhooks').insert(row);
      return { webhook: toWebhook(row), secret };
    },

    async dashboard_list_webhooks(_input, ctx) {
      return { webhooks: (await webhooksOf(db, ctx.caller.orgId)).map(toWebhook) };
    },

    async dashboard_delete_webhook({ webhookId }, ctx) {
      const row = await ownWebhook(s, ctx, webhookId);
      await db.transaction(async (tx) => {
        await tx('webhook_attempts').whereIn('delivery_id', tx('webhook_deliveries').select('id').where({ webhook_id: row.id })).delete();
        await tx('webhook_deliveries').where({ webhook_id: row.id }).delete();
        await tx('webhooks').where({ id: row.id }).delete();
      });
      return { webhookId: row.id, deleted: true as const };
    },

    async dashboard_list_webhook_deliveries({ webhookId, limit }, ctx) {
      const row = await ownWebhook(s, ctx, webhookId);
      const deliveries = await deliveriesOf(db, row.id, limit ?? 20);
      return {
        webhook: toWebhook(row),
        deliveries: deliveries.map(({ delivery: d, attempts }) => ({
          deliveryId: d.id, event: d.event, scheduleId: d.schedule_id, scanId: d.scan_id, status: d.status, createdAt: d.created_at, nextAttemptAt: d.next_attempt_at,
          attempts: attempts.map((a) => ({
            attempt: a.attempt, at: a.at, outcome: a.outcome, httpStatus: a.http_status, durationMs: a.duration_ms,
            errorClass: a.error_class as 'http_status' | 'timeout' | 'blocked_address' | 'connection' | 'redirect' | 'too_large' | null,
          })),
        })),
      };
    },
  };
}
