import { DurableObject } from "cloudflare:workers";
import { desc, lt } from "drizzle-orm";
import { z } from "zod";
import { config, rateLimitsFrom, type RateLimits, type Scope } from "../../config";
import { rateLimitKeys } from "../../core/rate-limit";
import * as schema from "../../db/tenant-schema";
import type { Env } from "../../env";
import { failure, type Result } from "../../http/error-codes";
import migrations from "../../../migrations/tenant";
import type { Agent } from "../../schema/agents";
import type { ApiKeyInfo, Tenant } from "../../schema/auth";
import { decodeCursor, encodeCursor, type Page } from "../../schema/common";
import { consumeCounter } from "../counters";
import { nowIso, openDatabase } from "../sqlite";
import { AgentDirectory } from "./directory";
import { IdempotencyStore, type IdempotencyBegin } from "./idempotency";
import { ApiKeys } from "./keys";
import { AgentActivity } from "./agent-activity";
import { answerWake, Decisions, type DecisionAnswer, type DecisionRecord, type QuestionRequest, type ResolveBody, type ResolveOutcome } from "./decisions";
import { Approvals } from "./approvals";
import type { ApprovalAnswer, ApprovalRequest, ApprovalState } from "./tool-approvals";
import { agentStub, tenantStub } from "../stubs";
import { eraseTenant, findAudit, forgetAgent, OPERATOR_AUDIT_OBJECT, type TenantErasure } from "./erasure";
import { NotificationLog } from "./notification-log";
import { Journal, type JournalListQuery, type JournalResult, type JournalWriteMeta } from "./journal";
import type { JournalRecord, JournalType } from "../../schema/journal";
import { Dispatcher } from "./dispatcher";
import { InboundEvents, type EventIngest } from "./inbound-events";
import { SubscriptionStore, MAX_SUBSCRIPTIONS_PER_AGENT } from "./subscription-store";
import type { IngestEventBody, Subscription, SubscriptionSpec } from "../../schema/subscriptions";
import { subscriptionSpecSchema } from "../../core/subscription-index";
import type { TenantDb } from "./types";
import { ExternalTriggers, type TriggerAdmission, type TriggerOutcome } from "./triggers";
import { WebhookSources, type SourceCreation, type SourceIngest } from "./webhook-sources";
import type { CreateWebhookSourceBody, SourceDelivery, TriggerAction, WebhookSourceRecord } from "../../schema/webhooks";
import type { ToolResultEnvelope } from "../../core/tool-envelopes";
import type { RegisterToolBody, TenantTool, ToolListing } from "../../schema/tools";
import type { ToolInvocation } from "../../tools/invocation";
import { listToolDescriptors } from "../../tools/registry";
import { TenantTools, type ToolRegistration } from "./tenant-tools";
import { ToolExecutor } from "./tool-executor";
import { TenantMetrics, type RunOutcome } from "./metrics";
import { liveChildIds } from "./lineage";
import type { DelegationContext, SpawnDecisionRecord } from "../agent/spawn";
import { runAlertnessBenchOp, type AlertnessBenchAnswer, type AlertnessBenchOp } from "./bench-ops";
import { retryScheduleFrom } from "../../core/outbound-delivery";
import type { CreateWebhookBody, WebhookDelivery, WebhookEndpoint } from "../../schema/outbound-webhooks";
import { EventFeed } from "./event-feed";
import { OutboundDeliveries, type AttemptReport, type PreparedAttempt } from "./outbound-webhooks";
import { TenantEventLog, type ForwardedAgentEvent } from "./tenant-event-log";
import { WebhookEndpoints, type EndpointCreation } from "./webhook-endpoints";
import { Governance } from "./governance";
import type { InferenceGrantRequest } from "./inference-grant";
import { dumpTables, type TableDump } from "../debug-dump";
import type { InferenceGrant, Policy, PolicyBody } from "../../schema/policy";
import type { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret } from "../../schema/providers";
import { TenantBrakes } from "./brakes";
import { BrakeDecisions, type BrakeDecisionOutcome } from "./brake-decisions";
import type { Brake } from "../../core/brakes";
import type { RunPolicy } from "../../core/run-governance";
import type { BrakeView, EngageBrakeBody } from "../../schema/brakes";
import type { DecisionHoldFilter } from "./decisions";

export type AuthOutcome =
  | { ok: true; keyId: string; scopes: Scope[] }
  | { ok: false; code: "unauthorized"; message: string }
  | { ok: false; code: "rate_limited"; message: string; retryAfterSeconds: number };

export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

/** One tenant: its keys, agent directory, idempotency records and audit log. */
export class TenantDO extends DurableObject<Env> {
  private readonly db: TenantDb;
  private readonly keys: ApiKeys;
  private readonly directory: AgentDirectory;
  private readonly idempotencyStore: IdempotencyStore;
  private readonly limits: RateLimits;
  private readonly decisions: Decisions;
  /** Change provenance shared by every writer (journal, events, webhooks, agent notifications). */
  private readonly notifications: NotificationLog;
  /** Agents' subscriptions and the materialized token index. */
  private readonly subscriptionStore: SubscriptionStore;
  private readonly agentActivity: AgentActivity;
  private readonly inboundEvents: InboundEvents;
  private readonly dispatcher: Dispatcher;
  /** Agents' external triggers (holon) and the tenant's signed webhook sources. */
  private readonly triggers: ExternalTriggers;
  private readonly webhookSources: WebhookSources;
  /** The journal domain: the tenant's source-of-truth records. */
  private readonly journal: Journal;
  /** Tool execution (saga phase 1 and reads) and the tenant's HTTP tools. */
  private readonly tenantTools: TenantTools;
  private readonly tools: ToolExecutor;
  /** Counters for GET /v1/metrics. */
  private readonly metrics: TenantMetrics;
  /** Policy versions, provider secrets, privacy receipts, inference grants (src/objects/tenant/governance.ts). */
  private readonly governance: Governance;
  /** Brakes / kill switches and the keep-or-release decisions they may open (src/objects/tenant/brakes.ts). */
  private readonly brakes: TenantBrakes;
  private readonly brakeDecisions: BrakeDecisions;
  /** The tenant-wide event log (GET /v1/events/stream) and the outbound webhooks hanging off it. */
  private readonly tenantEvents: TenantEventLog;
  private readonly webhookEndpoints: WebhookEndpoints;
  private readonly outbound: OutboundDeliveries;
  private readonly feed: EventFeed;
  private readonly approvals: Approvals;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = openDatabase(ctx, schema, migrations);
    this.keys = new ApiKeys(this.db);
    this.directory = new AgentDirectory(this.db);
    this.idempotencyStore = new IdempotencyStore(this.db);
    this.limits = rateLimitsFrom(env.VIGIL_RATE_LIMITS);
    // Approvals (helper "approvals"): trust, tool approvals, decision ticks; reads the policy and tools lazily.
    this.approvals = new Approvals({
      db: this.db,
      env,
      policy: () => this.getPolicy(),
      httpInputSchema: (name) => (this.tenantTools.descriptors().find((tool) => tool.name === `http:${name}` || tool.name === name)?.inputSchema as Record<string, unknown> | undefined) ?? null,
    });
    this.decisions = new Decisions(this.approvals.decisionsDeps());
    this.notifications = new NotificationLog(this.db, () => this.getTenant()?.id ?? "tenant");
    this.journal = new Journal(this.db, this.notifications, () => this.dispatchPending());
    this.tenantTools = new TenantTools(this.db, env.VIGIL_MASTER_KEY, env.VIGIL_FAULTS === "enabled");
    this.tools = new ToolExecutor({ db: this.db, journal: this.journal, timeZone: () => this.getTenant()?.timeZone ?? "UTC", callHttpTool: (inv) => this.tenantTools.call(inv) });
    this.subscriptionStore = new SubscriptionStore(this.db);
    this.metrics = new TenantMetrics(this.db);
    this.governance = new Governance(this.db, {
      masterKey: env.VIGIL_MASTER_KEY,
      allowLoopbackHttp: env.VIGIL_FAULTS === "enabled",
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
      toolHosts: () => this.tenantTools.list().map((tool) => new URL(tool.url).host),
    });
    this.inboundEvents = new InboundEvents(this.db, this.notifications);
    this.triggers = new ExternalTriggers(this.db, env.VIGIL_MASTER_KEY, () => this.getTenant()!.id);
    this.webhookSources = new WebhookSources(this.db, this.notifications, env.VIGIL_MASTER_KEY, () => this.getTenant()!.id);
    this.dispatcher = new Dispatcher({
      db: this.db,
      notifications: this.notifications,
      subscriptions: this.subscriptionStore,
      queue: env.WAKE_QUEUE,
      tenantId: () => this.getTenant()?.id ?? "",
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
      retryLater: (delayMs) => this.armAlarmAt(Date.now() + delayMs),
    });
    this.brakeDecisions = new BrakeDecisions(this.db);
    this.brakes = new TenantBrakes({
      db: this.db,
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
      openDecision: (request) => this.brakeDecisions.open(request),
      suspendDecisions: (filter) => this.suspendPendingDecisions(filter),
      resumeDecisions: (filter) => this.resumeSuspendedDecisions(filter),
      armAlarmAt: (atMs) => this.armAlarmAt(atMs),
      publish: (type, data) => this.ctx.waitUntil(this.feed.recordTenantEvent(type, null, null, data).then(() => undefined)),
    });
    this.tenantEvents = new TenantEventLog(this.db);
    this.webhookEndpoints = new WebhookEndpoints(this.db, env.VIGIL_MASTER_KEY, env.VIGIL_FAULTS === "enabled");
    this.outbound = new OutboundDeliveries({
      db: this.db,
      endpoints: this.webhookEndpoints,
      queue: env.OUTBOUND_QUEUE,
      tenantId: () => this.getTenant()?.id ?? "",
      schedule: retryScheduleFrom(config.outboundWebhooks, env.VIGIL_OUTBOUND_RETRY, env.VIGIL_FAULTS === "enabled"),
      retryLater: (delayMs) => this.armAlarmAt(Date.now() + delayMs),
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
    });
    this.feed = new EventFeed(this.db, this.tenantEvents, this.outbound);
    this.agentActivity = new AgentActivity({
      db: this.db,
      directory: this.directory,
      notifications: this.notifications,
      subscriptions: this.subscriptionStore,
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
    });
  }

  initTenant(id: string, name: string, timeZone: string): Result<{ tenant: Tenant; apiKey: string }> {
    if (this.getTenant()) return failure("conflict", "tenant already exists");
    const tenant: Tenant = { id, name, timeZone, createdAt: nowIso() };
    const created = this.db.transaction((tx) => {
      tx.insert(schema.tenant).values(tenant).run();
      return new ApiKeys(tx as unknown as TenantDb).create(id, "initial", [...config.defaultScopes]);
    });
    this.audit("operator", "tenant.created", id, { name });
    this.audit("operator", "key.created", created.id, { scopes: created.scopes });
    return { ok: true, tenant, apiKey: created.key };
  }

  getTenant(): Tenant | null {
    return this.db.select().from(schema.tenant).get() ?? null;
  }

  /** Resolves an API key hash and charges the key's request budget in one step. */
  authenticate(keyHash: string): AuthOutcome {
    const key = this.getTenant() ? this.keys.findActive(keyHash) : null;
    if (!key) return { ok: false, code: "unauthorized", message: "the API key is not valid or was revoked" };
    const limit = consumeCounter(this.db, rateLimitKeys.client(key.id), this.limits.requestsPerMinutePerKey, 60_000);
    if (!limit.allowed) {
      return { ok: false, code: "rate_limited", message: `at most ${this.limits.requestsPerMinutePerKey} requests per minute per key`, retryAfterSeconds: limit.retryAfterSeconds };
    }
    return { ok: true, keyId: key.id, scopes: key.scopes };
  }

  /** Rate limit for JWT principals (per subject), same budget as a key. */
  chargeClient(clientId: string): AuthOutcome {
    if (!this.getTenant()) return { ok: false, code: "unauthorized", message: "unknown tenant" };
    const limit = consumeCounter(this.db, rateLimitKeys.client(clientId), this.limits.requestsPerMinutePerKey, 60_000);
    if (!limit.allowed) return { ok: false, code: "rate_limited", message: "too many requests", retryAfterSeconds: limit.retryAfterSeconds };
    return { ok: true, keyId: clientId, scopes: [] };
  }

  createKey(actor: string, name: string | null, scopes: Scope[]): { id: string; key: string; scopes: Scope[] } {
    const created = this.keys.create(this.getTenant()!.id, name, scopes);
    this.audit(actor, "key.created", created.id, { scopes });
    return created;
  }

  listKeys(): ApiKeyInfo[] {
    return this.keys.list();
  }

  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    const key = this.keys.revoke(id);
    if (!key) return failure("not_found", "key not found");
    this.audit(actor, "key.revoked", id, {});
    return { ok: true, key };
  }

  /** The AgentDO reports every change of its record: directory snapshot + agentChangedNotification. */
  async upsertAgentDirectory(agent: Agent, parentId: string | null = null): Promise<void> {
    this.agentActivity.recordChange(agent, parentId);
    await this.dispatchPending();
  }

  /** After a run: agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  async recordAgentActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: { stateRevision: number; messageIds: string[] }): Promise<void> {
    this.agentActivity.recordRun(agent, activity);
    await this.dispatchPending();
  }

  listAgents(query: { limit: number; cursor?: string | undefined; includeChildren: boolean }): Result<Page<Agent>> {
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.directory.list(query.limit, after, query.includeChildren);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  hasAgent(agentId: string): boolean {
    return this.directory.has(agentId);
  }

  idempotencyBegin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    return this.idempotencyStore.begin(scope, key, requestHash);
  }

  idempotencyComplete(scope: string, key: string, status: number, body: string): void {
    this.idempotencyStore.complete(scope, key, status, body);
  }

  idempotencyAbort(scope: string, key: string): void {
    this.idempotencyStore.abort(scope, key);
  }

  /**
   * Matches recorded, undispatched notification batches against the subscription index and queues
   * one wake per match. Every writer that records a batch calls this after its transaction commits.
   */
  private async dispatchPending(): Promise<void> {
    await this.dispatcher.dispatchPending();
  }

  /** Retries subscription dispatch after a failed queue send (armed by the dispatcher). */
  override async alarm(): Promise<void> {
    await this.dispatchPending();
    // Timer brakes whose time has come are recorded as released (and re-arm the alarm for the next one).
    this.brakes.sweep();
    // Outbound deliveries whose queue message could not be sent yet.
    await this.outbound.sendUnqueued();
  }

  /** One alarm serves dispatch retries and timer brakes: arming never pushes an earlier alarm later. */
  private armAlarmAt(atMs: number): void {
    const armed = this.ctx.storage.getAlarm().then((current) => (current === null || current > atMs ? this.ctx.storage.setAlarm(atMs) : undefined));
    this.ctx.waitUntil(armed.catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "arming the tenant alarm failed", error: String(error) }))));
  }

  createSubscription(agentId: string, spec: SubscriptionSpec): Result<{ subscription: Subscription }> {
    const parsed = subscriptionSpecSchema.safeParse(spec);
    if (!parsed.success) return failure("validation_failed", parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
    const lifecycle = this.subscriptionStore.agentLifecycle(agentId);
    if (!lifecycle) return failure("not_found", "agent not found");
    if (lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed and cannot subscribe");
    if (this.subscriptionStore.countActive(agentId) >= MAX_SUBSCRIPTIONS_PER_AGENT) {
      return failure("conflict", `an agent may hold at most ${MAX_SUBSCRIPTIONS_PER_AGENT} subscriptions`);
    }
    return { ok: true, subscription: this.subscriptionStore.create(agentId, parsed.data) };
  }

  listSubscriptions(agentId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<Subscription>> {
    if (!this.subscriptionStore.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.subscriptionStore.list(agentId, query.limit, after);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  deleteSubscription(agentId: string, subscriptionId: string): Result<{ subscription: Subscription }> {
    if (!this.subscriptionStore.agentLifecycle(agentId)) return failure("not_found", "agent not found");
    const subscription = this.subscriptionStore.remove(agentId, subscriptionId);
    return subscription ? { ok: true, subscription } : failure("not_found", "subscription not found");
  }

  /** `POST /v1/events`: record once per (source, deliveryId), then dispatch (also on a duplicate, which heals a failed dispatch). */
  async ingestEvent(body: IngestEventBody): Promise<EventIngest> {
    const result = this.inboundEvents.record(body);
    if (result.ok) await this.dispatchPending();
    return result;
  }

  /** `POST /v1/agents/:id/trigger`: provision (returns the active descriptor), rotate or revoke. */
  async manageTrigger(actor: string, agentId: string, action: TriggerAction, requestKey?: string): Promise<TriggerOutcome> {
    const result = await this.triggers.manage(agentId, action, requestKey);
    if (result.ok && result.changed) this.audit(actor, `trigger.${result.reason ?? action}`, result.trigger.triggerId, { agentId });
    return result;
  }

  /** Trigger ingress: verifies the token hash; with a delivery id, also records the delivery. */
  admitTriggerDelivery(triggerId: string, tokenHash: string, deliveryId: string | null): TriggerAdmission {
    return this.triggers.admitDelivery(triggerId, tokenHash, deliveryId);
  }

  async createWebhookSource(actor: string, body: CreateWebhookSourceBody, requestKey?: string): Promise<SourceCreation> {
    const result = await this.webhookSources.create(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "webhook_source.created", result.source.id, { scheme: result.source.scheme, secretGenerated: body.secret === undefined });
    return result;
  }

  listWebhookSources(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookSourceRecord>> {
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.webhookSources.list(query.limit, after);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  getWebhookSource(id: string): Result<{ source: WebhookSourceRecord }> {
    const source = this.webhookSources.get(id);
    return source ? { ok: true, source } : failure("not_found", "webhook source not found");
  }

  deleteWebhookSource(actor: string, id: string): Result<{ source: WebhookSourceRecord }> {
    const source = this.webhookSources.delete(id);
    if (!source) return failure("not_found", "webhook source not found");
    this.audit(actor, "webhook_source.deleted", id, {});
    return { ok: true, source };
  }

  /** Source ingress: verify, record once, then dispatch (also on a duplicate, which heals a failed dispatch). */
  async receiveWebhook(delivery: SourceDelivery): Promise<SourceIngest> {
    const result = await this.webhookSources.receive(delivery);
    if (result.ok) await this.dispatchPending();
    return result;
  }

  /** Journal CRUD (SPEC §1 journal domain); every write records one notification batch, then dispatches. */
  journalCreate(type: JournalType, input: unknown, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.journal.create(type, input, meta);
  }

  journalGet(type: JournalType, id: string): JournalResult {
    return this.journal.get(type, id);
  }

  journalList(type: JournalType, query: JournalListQuery): Result<Page<JournalRecord>> {
    return this.journal.list(type, query);
  }

  journalPatch(type: JournalType, id: string, input: unknown, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.journal.patch(type, id, input, meta);
  }

  journalDelete(type: JournalType, id: string, version: number, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.journal.delete(type, id, version, meta);
  }

  /** One tool call for an agent: a journal tool (idempotent by operationId, or a read) or `http:<name>`. */
  executeTool(invocation: ToolInvocation): Promise<ToolResultEnvelope> {
    return this.tools.execute(invocation);
  }

  /** `GET /v1/tools`: the built-in registry, then the tenant's HTTP tools. */
  listTools(): ToolListing[] {
    return [...listToolDescriptors().map((descriptor): ToolListing => ({ kind: "builtin", ...descriptor })), ...this.tenantTools.descriptors()];
  }

  async registerTenantTool(actor: string, body: RegisterToolBody, requestKey?: string): Promise<ToolRegistration> {
    const result = await this.tenantTools.register(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "tool.registered", result.tool.id, { name: result.tool.name, host: new URL(result.tool.url).host });
    return result;
  }

  deleteTenantTool(actor: string, id: string): Result<{ tool: TenantTool }> {
    const tool = this.tenantTools.delete(id);
    if (!tool) return failure("not_found", "tool not found");
    this.audit(actor, "tool.deleted", id, { name: tool.name });
    return { ok: true, tool };
  }

  /** The current governance policy (version 0 = the empty default). */
  getPolicy(): Policy {
    return this.governance.policy();
  }

  /** `PUT /v1/policy`: validated, appended as the next version and audited (an identical body changes nothing). */
  putPolicy(actor: string, body: PolicyBody, ifMatch?: number): ReturnType<Governance["putPolicy"]> {
    return this.governance.putPolicy(actor, body, ifMatch);
  }

  createProviderSecret(actor: string, body: CreateProviderSecretBody, requestKey?: string): ReturnType<Governance["createSecret"]> {
    return this.governance.createSecret(actor, body, requestKey);
  }

  listProviderSecrets(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderSecret>> {
    return this.governance.listSecrets(query);
  }

  revokeProviderSecret(actor: string, id: string): Result<{ secret: ProviderSecret }> {
    return this.governance.revokeSecret(actor, id);
  }

  recordProviderConsent(actor: string, body: CreateConsentBody): ReturnType<Governance["recordConsent"]> {
    return this.governance.recordConsent(actor, body);
  }

  listProviderConsents(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderConsent>> {
    return this.governance.listConsents(query);
  }

  /** The inference gate's tenant half (provider → model → privacy receipt → secret); every denial is audited. */
  inferenceGrant(request: InferenceGrantRequest): Promise<Result<{ grant: InferenceGrant }>> {
    return this.governance.inferenceGrant(request);
  }

  /** Hosts the tenant's agents may reach: configured provider endpoints and registered HTTP tools. */
  async egressHosts(): Promise<string[]> {
    return this.governance.egressHosts();
  }

  /** Test seam (VIGIL_FAULTS=enabled only): every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    return { ok: true, tables: await dumpTables(this.ctx.storage) };
  }

  /** Bench seam (VIGIL_BENCH=enabled only): bulk subscriptions, dry-run matching, counts (bench/alertness.mjs). */
  benchAlertness(op: AlertnessBenchOp): Result<{ answer: AlertnessBenchAnswer }> {
    if (this.env.VIGIL_BENCH !== "enabled") return failure("not_found", "no such route");
    return runAlertnessBenchOp({ db: this.db, dispatcher: this.dispatcher, subscribe: (agentId, spec) => this.createSubscription(agentId, spec) }, op);
  }

  /** Opens the decision for an agent's ask_user call (idempotent by operationId). */
  openQuestion(request: QuestionRequest): string {
    return this.decisions.openQuestion(request);
  }

  /** `GET /v1/decisions`: tenant-wide, newest first; `agentIds` narrows to a widget token's agents. */
  listDecisions(query: { limit: number; cursor?: string | undefined; status?: string | undefined; agentId?: string | undefined; type?: string | undefined; agentIds?: string[] | undefined }): Result<Page<DecisionRecord>> {
    const before = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.decisions.page({ limit: query.limit, status: query.status, agentId: query.agentId, type: query.type, before, agentIds: query.agentIds });
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor({ c: page.last.createdAt, i: page.last.id }) : null };
  }

  /**
   * A person resolves an ask_user decision (row + audit in one transaction), then the asking agent wakes once with
   * reason toolResult and the answer as an observation (runKey = runKeys.toolResult(agent, operationId), so a repeat dedupes).
   */
  async resolveDecision(actor: string, id: string, body: ResolveBody, visibleAgents?: string[]): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    // A brake's keep/release decision (helper "brakes"): resolving it may release the brake; it wakes no agent.
    const brakeOutcome = this.brakeDecisions.resolve(actor, id, body, visibleAgents);
    if (brakeOutcome) {
      if (brakeOutcome.ok) this.brakes.decisionResolved(id, brakeOutcome.chosenOptionId, actor);
      return brakeOutcome;
    }
    const outcome = this.decisions.resolve(id, body, actor, visibleAgents);
    if (outcome.ok && outcome.answer) {
      const { decisionId, resolutionType, chosenOptionId, answerText } = outcome.answer.data;
      await this.feed.recordTenantEvent("decision.resolved", outcome.answer.agentId, outcome.answer.runKey, { decisionId, kind: "ask_user", resolutionType, chosenOptionId, answerText, actor });
      await this.deliverAnswer(id, outcome.answer);
    } else if (outcome.ok && outcome.saga) {
      // No tenant-level event here: the agent's saga appends `decision.resolved` (every path, timeouts included), which reaches the tenant stream.
      await this.approvals.wakeSaga(outcome.saga.operationId);
    } else if (!outcome.ok && outcome.code === "decision_not_pending") {
      if (outcome.answer) await this.deliverAnswer(id, outcome.answer);
      if (outcome.saga) await this.approvals.wakeSaga(outcome.saga.operationId);
    }
    return outcome;
  }

  // ── Tool approvals (helper "approvals", seed 002): the agent's gate and the saga's wait ──

  /** Before a mutating call's saga starts: does it need a person? Opens the decision once (by operationId). Trust never leaves. */
  requestToolApproval(request: ApprovalRequest): ApprovalAnswer {
    return this.approvals.request(request);
  }

  /** The waiting saga reads its decision (JSON text: workflow step results must serialise shallowly). */
  toolApprovalState(decisionId: string): string {
    return JSON.stringify(this.approvals.state(decisionId) satisfies ApprovalState);
  }

  /** The saga's wait ran out: apply the decision's timeout policy if it is due (recorded in the audit log). */
  toolApprovalTimedOut(decisionId: string): string {
    return JSON.stringify(this.approvals.timedOut(decisionId) satisfies ApprovalState);
  }

  /** Test seam (VIGIL_FAULTS=enabled only): this tenant's decision tick length in ms (null: config default). */
  setDecisionTickMs(ms: number | null): boolean {
    if (this.env.VIGIL_FAULTS !== "enabled") return false;
    this.approvals.setTickMs(ms);
    return true;
  }

  /** Wakes the asking agent with the answer; idempotent by its runKey, so re-sending is safe. */
  private async deliverAnswer(id: string, answer: DecisionAnswer): Promise<void> {
    const woke = await agentStub(this.env, this.getTenant()!.id, answer.agentId).enqueueWake(answerWake(this.getTenant()!.id, answer));
    if (!woke.ok) console.error(JSON.stringify({ level: "error", msg: "decision answer wake failed", agentId: answer.agentId, decisionId: id, code: woke.code }));
  }

  // ── Brakes (helper "brakes", SPEC §5) ──

  /** `POST /v1/brakes`: engaged at once (audited; covered pending decisions are suspended). */
  engageBrake(actor: string, body: EngageBrakeBody): Result<{ brake: BrakeView }> {
    return this.brakes.engage(actor, body);
  }

  listBrakes(query: { limit: number; cursor?: string | undefined; status?: "active" | "released" | undefined }): Result<Page<BrakeView>> {
    const before = decodeCursor(query.cursor, z.object({ c: z.number().int(), i: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.brakes.list({ limit: query.limit, status: query.status, before });
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  releaseBrake(actor: string, id: string): Result<{ brake: BrakeView }> {
    return this.brakes.release(actor, id);
  }

  /**
   * What governs one agent's run right now, in one round trip: the active brakes that may concern it,
   * the tenant's time zone (budget days) and the policy's budgets, tool quotas and tool rate limits.
   */
  governanceFor(agent: { agentId: string; kind: string }): { brakes: Brake[]; timeZone: string; policy: RunPolicy } {
    const policy = this.getPolicy();
    return {
      brakes: this.brakes.activeFor(agent),
      timeZone: this.getTenant()?.timeZone ?? "UTC",
      policy: { budgets: policy.budgets, toolQuotas: policy.toolQuotas, toolRateLimits: policy.toolRateLimits },
    };
  }

  /** A brake holds back the pending decisions it covers (status `suspended`); brake decisions themselves are never held. */
  suspendPendingDecisions(filter: DecisionHoldFilter): number {
    return this.decisions.suspendPending(filter);
  }

  resumeSuspendedDecisions(filter: DecisionHoldFilter): number {
    return this.decisions.resumeSuspended(filter);
  }

  // ── Tenant event stream and outbound webhooks (helper "webhooks", SPEC §8–§9) ──

  /** An agent's forwarded events (one RPC per batch); a re-sent batch adds nothing. */
  async recordAgentEvents(agentId: string, events: ForwardedAgentEvent[]): Promise<Result<{ recorded: number }>> {
    return { ok: true, recorded: await this.feed.recordAgentEvents(agentId, events) };
  }

  /** `GET /v1/events/stream` body: replay after `after`, then live; `agentIds` narrows it (widget tokens). */
  openTenantEvents(after: number, agentIds: string[] | null): Result<{ stream: ReadableStream<Uint8Array> }> {
    if (!this.getTenant()) return failure("not_found", "tenant not found");
    return { ok: true, stream: this.tenantEvents.subscribe(after, agentIds) };
  }

  async createWebhook(actor: string, body: CreateWebhookBody, requestKey?: string): Promise<EndpointCreation> {
    const result = await this.webhookEndpoints.create(body, requestKey);
    if (result.ok && result.created) this.audit(actor, "webhook.created", result.endpoint.id, { host: new URL(result.endpoint.url).host, eventTypes: result.endpoint.eventTypes });
    return result;
  }

  listWebhooks(query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookEndpoint>> {
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const page = this.webhookEndpoints.list(query.limit, after);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  getWebhook(id: string): Result<{ endpoint: WebhookEndpoint }> {
    const endpoint = this.webhookEndpoints.get(id);
    return endpoint ? { ok: true, endpoint } : failure("not_found", "webhook not found");
  }

  deleteWebhook(actor: string, id: string): Result<{ endpoint: WebhookEndpoint }> {
    const endpoint = this.webhookEndpoints.delete(id);
    if (!endpoint) return failure("not_found", "webhook not found");
    this.audit(actor, "webhook.deleted", id, {});
    return { ok: true, endpoint };
  }

  listWebhookDeliveries(endpointId: string, query: { limit: number; cursor?: string | undefined }): Result<Page<WebhookDelivery>> {
    const before = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.outbound.list(endpointId, query.limit, before);
    if (!page.ok) return page;
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  /** Outbound consumer, step 1: what to send for this delivery (or skip it). */
  prepareOutboundAttempt(deliveryId: string): Promise<PreparedAttempt> {
    return this.outbound.prepare(deliveryId);
  }

  /** Outbound consumer, step 2: record the attempt; the answer says ack (delivered/dead) or retry after a delay. */
  recordOutboundAttempt(deliveryId: string, attempt: number, report: AttemptReport): ReturnType<OutboundDeliveries["record"]> {
    return this.outbound.record(deliveryId, attempt, report);
  }

  /** The outbound DLQ backstop. */
  deadLetterOutbound(deliveryId: string): void {
    this.outbound.deadLetter(deliveryId);
  }

  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
    this.db.insert(schema.audit).values({ at: nowIso(), actor, action, target, detail }).run();
  }

  /** An agent was erased (SPEC §7): the tenant forgets its directory entry and agent-keyed rows, and audits it (src/objects/tenant/erasure.ts). */
  recordAgentErased(receipt: { agentId: string; reason: string; rows: Record<string, number> }): void {
    const tenantRows = forgetAgent(this.db, this.ctx.storage, receipt.agentId);
    this.audit("system", "agent.erased", receipt.agentId, { reason: receipt.reason, agentRows: receipt.rows, tenantRows });
  }

  /** `DELETE /v1/tenants/:id`: erases every agent and then every row of this tenant; the record survives in the operator audit object. */
  async eraseTenant(actor: string): Promise<Result<{ erasure: TenantErasure }>> {
    const tenant = this.getTenant();
    if (!tenant) return failure("not_found", "tenant not found");
    const erasure = await eraseTenant(
      {
        db: this.db,
        storage: this.ctx.storage,
        tenantId: tenant.id,
        migrations,
        eraseAgent: (agentId) => agentStub(this.env, tenant.id, agentId).eraseForTenant(),
        recordErasure: ({ actor: by, ...detail }) => tenantStub(this.env, OPERATOR_AUDIT_OBJECT).audit(by, "tenant.erased", tenant.id, detail),
      },
      actor,
    );
    return { ok: true, erasure };
  }

  /** Operator audit object only: the newest audit entry about `target` with `action`. */
  findAudit(action: string, target: string): AuditEntry | null {
    return findAudit(this.db, action, target);
  }

  /** A run reached a terminal status in one of the tenant's agents (metrics counters). */
  recordRunOutcome(outcome: RunOutcome): void {
    this.metrics.recordRunOutcome(outcome);
  }

  /** GET /v1/metrics body (Prometheus text exposition). */
  metricsText(): string {
    return this.metrics.render();
  }

  // ── Delegation (helper "delegation", SPEC §3) ──

  /** What spawn admission needs from the tenant, in one round trip: live children, brakes, time zone, budgets. */
  delegationContext(parent: { agentId: string; kind: string }): DelegationContext {
    const governance = this.governanceFor(parent);
    return { liveChildIds: liveChildIds(this.db, parent.agentId), brakes: governance.brakes, timeZone: governance.timeZone, policy: { budgets: governance.policy.budgets } };
  }

  /** Every spawn decision is a policy decision: audited (`agent.spawned` / `agent.spawn_denied`) and counted. */
  recordSpawnDecision(decision: SpawnDecisionRecord): void {
    this.audit(`agent:${decision.parentId}`, decision.outcome === "admitted" ? "agent.spawned" : "agent.spawn_denied", decision.childId ?? decision.parentId, {
      operationId: decision.operationId,
      ...(decision.reason ? { reason: decision.reason } : {}),
    });
    this.metrics.increment("vigil_spawns_total", { outcome: decision.outcome });
  }

  listAudit(limit: number, beforeSeq?: number): AuditEntry[] {
    return this.db
      .select()
      .from(schema.audit)
      .where(beforeSeq === undefined ? undefined : lt(schema.audit.seq, beforeSeq))
      .orderBy(desc(schema.audit.seq))
      .limit(limit)
      .all();
  }
}
