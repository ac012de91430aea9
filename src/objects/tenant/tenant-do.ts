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
import { agentStub } from "../stubs";
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
import { runAlertnessBenchOp, type AlertnessBenchAnswer, type AlertnessBenchOp } from "./bench-ops";

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

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = openDatabase(ctx, schema, migrations);
    this.keys = new ApiKeys(this.db);
    this.directory = new AgentDirectory(this.db);
    this.idempotencyStore = new IdempotencyStore(this.db);
    this.limits = rateLimitsFrom(env.VIGIL_RATE_LIMITS);
    this.decisions = new Decisions(this.db);
    this.notifications = new NotificationLog(this.db, () => this.getTenant()?.id ?? "tenant");
    this.journal = new Journal(this.db, this.notifications, () => this.dispatchPending());
    this.tenantTools = new TenantTools(this.db, env.VIGIL_MASTER_KEY, env.VIGIL_FAULTS === "enabled");
    this.tools = new ToolExecutor({ db: this.db, journal: this.journal, timeZone: () => this.getTenant()?.timeZone ?? "UTC", callHttpTool: (inv) => this.tenantTools.call(inv) });
    this.subscriptionStore = new SubscriptionStore(this.db);
    this.metrics = new TenantMetrics(this.db);
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
      retryLater: (delayMs) => void ctx.storage.setAlarm(Date.now() + delayMs),
    });
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
  listDecisions(query: { limit: number; cursor?: string | undefined; status?: string | undefined; agentIds?: string[] | undefined }): Result<Page<DecisionRecord>> {
    const before = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.decisions.page({ limit: query.limit, status: query.status, before, agentIds: query.agentIds });
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor({ c: page.last.createdAt, i: page.last.id }) : null };
  }

  /**
   * A person resolves an ask_user decision (row + audit in one transaction), then the asking agent wakes once with
   * reason toolResult and the answer as an observation (runKey = runKeys.toolResult(agent, operationId), so a repeat dedupes).
   */
  async resolveDecision(actor: string, id: string, body: ResolveBody, visibleAgents?: string[]): Promise<ResolveOutcome> {
    const outcome = this.decisions.resolveQuestion(id, body, actor, visibleAgents);
    if (outcome.ok) await this.deliverAnswer(id, outcome.answer);
    else if (outcome.code === "decision_not_pending" && outcome.answer) await this.deliverAnswer(id, outcome.answer);
    return outcome;
  }

  /** Wakes the asking agent with the answer; idempotent by its runKey, so re-sending is safe. */
  private async deliverAnswer(id: string, answer: DecisionAnswer): Promise<void> {
    const woke = await agentStub(this.env, this.getTenant()!.id, answer.agentId).enqueueWake(answerWake(this.getTenant()!.id, answer));
    if (!woke.ok) console.error(JSON.stringify({ level: "error", msg: "decision answer wake failed", agentId: answer.agentId, decisionId: id, code: woke.code }));
  }

  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
    this.db.insert(schema.audit).values({ at: nowIso(), actor, action, target, detail }).run();
  }

  /** A run reached a terminal status in one of the tenant's agents (metrics counters). */
  recordRunOutcome(outcome: RunOutcome): void {
    this.metrics.recordRunOutcome(outcome);
  }

  /** GET /v1/metrics body (Prometheus text exposition). */
  metricsText(): string {
    return this.metrics.render();
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
