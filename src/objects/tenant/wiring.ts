import { config, rateLimitsFrom } from "../../config";
import { retryScheduleFrom } from "../../core/outbound-delivery";
import * as schema from "../../db/tenant-schema";
import type { Env } from "../../env";
import migrations from "../../../migrations/tenant";
import { openDatabase } from "../shared/sqlite";
import { agentStub, tenantStub } from "../shared/stubs";
import { AgentActivity } from "./directory/agent-activity";
import { Approvals } from "./decisions/approvals";
import { BrakeDecisions } from "./decisions/brake-decisions";
import { TenantBrakes } from "./governance/brakes";
import { ClientAuth } from "./access/client-auth";
import { DecisionResolution } from "./decisions/resolution";
import { Decisions } from "./decisions/decisions";
import { AgentDirectory } from "./directory/directory";
import { Dispatcher } from "./alertness/dispatcher";
import { eraseTenant, forgetAgent, OPERATOR_AUDIT_OBJECT, type TenantErasure } from "./directory/erasure";
import { EventFeed } from "./channels/event-feed";
import { Governance } from "./governance/governance";
import { IdempotencyStore } from "./access/idempotency";
import { InboundEvents } from "./alertness/inbound-events";
import { Journal } from "./journal";
import { ApiKeys } from "./access/keys";
import { TenantMetrics } from "./channels/metrics";
import { NotificationLog } from "./alertness/notification-log";
import { OutboundDeliveries } from "./channels/outbound-webhooks";
import { SubscriptionStore } from "./alertness/subscriptions";
import { TenantEventLog } from "./channels/tenant-event-log";
import { readTenant } from "./access/tenant-record";
import { TenantTools } from "./tools/http-tools";
import { ToolExecutor } from "./tools/executor";
import { ExternalTriggers } from "./alertness/triggers";
import type { Audit } from "./types";
import { WebhookEndpoints } from "./channels/webhook-endpoints";
import { WebhookSources } from "./alertness/webhook-sources";

/** What the TenantDO itself provides to its parts: the audit log and the one alarm they share. */
export interface TenantHooks {
  audit: Audit;
  /** Arms the object's alarm for `atMs` unless an earlier one is already armed. */
  armAlarmAt(atMs: number): void;
}

export type TenantParts = ReturnType<typeof buildTenantParts>;

/**
 * Opens the tenant's SQLite and wires every part of the TenantDO to the others. Parts that need a
 * later part reach it through a closure, called only after construction.
 */
export function buildTenantParts(ctx: DurableObjectState, env: Env, hooks: TenantHooks) {
  const db = openDatabase(ctx, schema, migrations);
  const audit = hooks.audit;
  const tenant = () => readTenant(db);
  const allowLoopbackHttp = env.VIGIL_FAULTS === "enabled";
  const retryLater = (delayMs: number) => hooks.armAlarmAt(Date.now() + delayMs);
  const keys = new ApiKeys(db);
  const directory = new AgentDirectory(db);
  const idempotency = new IdempotencyStore(db);
  const clientAuth = new ClientAuth(db, keys, rateLimitsFrom(env.VIGIL_RATE_LIMITS), () => tenant() !== null);
  // Approvals (helper "approvals"): trust, tool approvals, decision ticks; reads the policy and tools lazily.
  const approvals = new Approvals({
    db,
    env,
    policy: () => governance.policy(),
    httpInputSchema: (name) => (tenantTools.descriptors().find((tool) => tool.name === `http:${name}` || tool.name === name)?.inputSchema as Record<string, unknown> | undefined) ?? null,
  });
  const decisions = new Decisions(approvals.decisionsDeps());
  /** Change provenance shared by every writer (journal, events, webhooks, agent notifications). */
  const notifications = new NotificationLog(db, () => tenant()?.id ?? "tenant");
  /** The journal domain: the tenant's source-of-truth records; every write dispatches after it commits. */
  const journal = new Journal(db, notifications, () => dispatcher.dispatchPending());
  /** Tool execution (saga phase 1 and reads) and the tenant's HTTP tools. */
  const tenantTools = new TenantTools(db, env.VIGIL_MASTER_KEY, allowLoopbackHttp);
  const tools = new ToolExecutor({ db, journal, timeZone: () => tenant()?.timeZone ?? "UTC", callHttpTool: (inv) => tenantTools.call(inv) });
  /** Agents' subscriptions and the materialized token index. */
  const subscriptions = new SubscriptionStore(db);
  /** Counters for GET /v1/metrics. */
  const metrics = new TenantMetrics(db);
  /** Policy versions, provider secrets, privacy receipts, inference grants. */
  const governance = new Governance(db, {
    masterKey: env.VIGIL_MASTER_KEY,
    allowLoopbackHttp,
    audit,
    toolHosts: () => tenantTools.list().map((tool) => new URL(tool.url).host),
  });
  const inboundEvents = new InboundEvents(db, notifications);
  /** Agents' external triggers (holon) and the tenant's signed webhook sources. */
  const triggers = new ExternalTriggers(db, env.VIGIL_MASTER_KEY, () => tenant()!.id);
  const webhookSources = new WebhookSources(db, notifications, env.VIGIL_MASTER_KEY, () => tenant()!.id);
  /** Matches recorded, undispatched notification batches against the subscription index and queues one wake per match. */
  const dispatcher = new Dispatcher({ db, notifications, subscriptions, queue: env.WAKE_QUEUE, tenantId: () => tenant()?.id ?? "", audit, retryLater });
  /** Brakes / kill switches and the keep-or-release decisions they may open. */
  const brakeDecisions = new BrakeDecisions(db);
  const brakes = new TenantBrakes({
    db,
    audit,
    openDecision: (request) => brakeDecisions.open(request),
    suspendDecisions: (filter) => decisions.suspendPending(filter),
    resumeDecisions: (filter) => decisions.resumeSuspended(filter),
    armAlarmAt: (atMs) => hooks.armAlarmAt(atMs),
    publish: (type, data) => ctx.waitUntil(feed.recordTenantEvent(type, null, null, data).then(() => undefined)),
  });
  /** The tenant-wide event log (GET /v1/events/stream) and the outbound webhooks hanging off it. */
  const tenantEvents = new TenantEventLog(db);
  const webhookEndpoints = new WebhookEndpoints(db, env.VIGIL_MASTER_KEY, allowLoopbackHttp);
  const outbound = new OutboundDeliveries({
    db,
    endpoints: webhookEndpoints,
    queue: env.OUTBOUND_QUEUE,
    tenantId: () => tenant()?.id ?? "",
    schedule: retryScheduleFrom(config.outboundWebhooks, env.VIGIL_OUTBOUND_RETRY, allowLoopbackHttp),
    retryLater,
    audit,
  });
  const feed = new EventFeed(db, tenantEvents, outbound);
  const agentActivity = new AgentActivity({ db, directory, notifications, subscriptions, audit });
  const decisionResolution = new DecisionResolution({ env, tenantId: () => tenant()!.id, decisions, brakeDecisions, brakes, approvals, feed });
  /** SPEC §7: forgetting one erased agent, and erasing the whole tenant (the record survives in the operator audit object). */
  const erasure = {
    forgetAgent: (agentId: string) => forgetAgent(db, ctx.storage, agentId),
    eraseTenant: (tenantId: string, actor: string): Promise<TenantErasure> =>
      eraseTenant(
        {
          db,
          storage: ctx.storage,
          tenantId,
          migrations,
          eraseAgent: (agentId) => agentStub(env, tenantId, agentId).eraseForTenant(),
          recordErasure: ({ actor: by, ...detail }) => tenantStub(env, OPERATOR_AUDIT_OBJECT).audit(by, "tenant.erased", tenantId, detail),
        },
        actor,
      ),
  };
  return {
    db,
    keys,
    clientAuth,
    directory,
    idempotency,
    approvals,
    decisions,
    decisionResolution,
    notifications,
    journal,
    tenantTools,
    tools,
    subscriptions,
    metrics,
    governance,
    inboundEvents,
    triggers,
    webhookSources,
    dispatcher,
    brakes,
    brakeDecisions,
    tenantEvents,
    webhookEndpoints,
    outbound,
    feed,
    agentActivity,
    erasure,
  };
}
