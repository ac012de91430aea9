import { DurableObject } from "cloudflare:workers";
import type { Scope } from "../../config";
import type { ToolResultEnvelope } from "../../core/tools/tool-envelopes";
import type { Env } from "../../env";
import type { Result } from "../../core/runtime/result";
import { configureLogging } from "../../log";
import type { Agent, AgentFilters } from "../../schema/agents/agents";
import type { ApiKeyInfo, Tenant } from "../../schema/admin/auth";
import type { BrakeView, EngageBrakeBody } from "../../schema/admin/brakes";
import type { Page } from "../../schema/common";
import type { JournalRecord, JournalType } from "../../schema/agents/journal";
import type { CreateWebhookBody, WebhookDelivery, WebhookEndpoint } from "../../schema/admin/outbound-webhooks";
import type { IdentityProvider, InferenceGrant, Policy, PolicyBody } from "../../schema/admin/policy";
import type { RetentionPolicy } from "../../core/memory/retention";
import type { TenantPruneOutcome } from "./retention";
import type { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret } from "../../schema/admin/providers";
import type { IngestEventBody, Subscription, SubscriptionSpec } from "../../schema/agents/subscriptions";
import type { RegisterToolBody, TenantTool, ToolListing } from "../../schema/admin/tools";
import type { McpServer, RegisterMcpServerBody } from "../../schema/admin/mcp-servers";
import type { CreateWebhookSourceBody, SourceDelivery, TriggerAction, WebhookSourceRecord } from "../../schema/agents/webhooks";
import type { ToolInvocation } from "../../tools/invocation";
import type { AgentSnapshot, DelegationContext, DoCallCount, RunGovernance, RunReport, SpawnDecisionRecord } from "../../schema/contracts";
import { runHooks } from "../shared/hooks";
import { cursorPage, numberKeyCursor, textKeyCursor } from "../shared/paging";
import { dumpTables, Seams, type TableDump } from "../shared/seams";
import { REGISTERED_NOTE, type AuthOutcome, type IdempotencyBegin, type RegisteredTenant } from "./access";
import { runAlertnessBenchOp, type AlertnessBenchAnswer, type AlertnessBenchOp, type EventIngest, type TriggerAdmission, type TriggerOutcome, type SourceCreation, type SourceIngest } from "./alertness";
import type { AttemptReport, OutboundDeliveries, PreparedAttempt, EndpointCreation } from "./channels";
import type { BrakeDecisionOutcome, DecisionRecord, QuestionRequest, ResolveBody, ResolveOutcome, DecisionListQuery, ApprovalAnswer, ApprovalRequest, ApprovalState } from "./decisions";
import { delegationContextFor, recordSpawnDecision, type TenantErasure } from "./directory";
import { auditPage, findAudit, type AuditEntry, type Governance, type InferenceGrantRequest } from "./governance";
import type { JournalListQuery, JournalResult, JournalWriteMeta } from "./journal";
import type { ToolRegistration } from "./tools";
import { TenantWiring } from "./wiring";

export type { AuditEntry } from "./governance";
export type { AuthOutcome } from "./access";

type PageQuery = { limit: number; cursor?: string | undefined };

/**
 * One tenant: the only class of this Durable Object. Its RPC methods are one-line delegations to the
 * parts (built in ./wiring.ts), grouped by area; the rules, audit and dispatch-after-commit live in
 * the parts.
 */
export class TenantDO extends DurableObject<Env> {
  /** Every part of this tenant (tests inspect them as `instance.parts.<name>`). */
  readonly parts: TenantWiring;
  private readonly seams: Seams;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    configureLogging(env.VIGIL_LOG_LEVEL);
    this.parts = new TenantWiring(ctx, env);
    this.seams = new Seams(env);
    this.seams.meter(ctx.storage);
  }

  /** The one alarm: the onAlarm hooks in ./wiring.ts. */
  override async alarm(): Promise<void> {
    await runHooks(this.parts.onAlarm);
  }

  // ── Access: the tenant record, API keys, request budgets, idempotency ──────────────────────────
  /** Called after the registry recorded the tenant: the note spares this object from joining it again. */
  initTenant(id: string, name: string, timeZone: string): Result<{ tenant: Tenant; apiKey: string }> {
    const created = this.parts.access.initTenant(id, name, timeZone);
    if (created.ok) this.ctx.storage.kv.put(REGISTERED_NOTE, true);
    return created;
  }
  getTenant(): Tenant | null {
    return this.parts.tenant();
  }
  /** Resolves an API key hash (the Worker caches the answer for config.auth.cacheTtlMs). */
  authenticate(keyHash: string): AuthOutcome {
    return this.parts.clientAuth.authenticate(keyHash);
  }
  /** `keyedId`: the id a create under an Idempotency-Key derives; a key already holding it answers 409 (its secret is gone). */
  createKey(actor: string, name: string | null, scopes: Scope[], keyedId?: string): Result<{ id: string; key: string; scopes: Scope[] }> {
    return this.parts.access.createKey(actor, name, scopes, keyedId);
  }
  listKeys(): ApiKeyInfo[] {
    return this.parts.keys.list();
  }
  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    return this.parts.access.revokeKey(actor, id);
  }
  idempotencyBegin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    return this.parts.idempotency.begin(scope, key, requestHash);
  }
  idempotencyComplete(scope: string, key: string, status: number, body: string): void {
    this.parts.idempotency.complete(scope, key, status, body);
  }
  idempotencyAbort(scope: string, key: string): void {
    this.parts.idempotency.abort(scope, key);
  }

  // ── Platform tenant registry (only the TENANT_REGISTRY_OBJECT instance holds entries) ───────────
  registryRecord(tenant: RegisteredTenant): void {
    this.parts.registry.record(tenant);
  }
  registryRemove(tenantId: string): boolean {
    return this.parts.registry.remove(tenantId);
  }
  registryHas(tenantId: string): boolean {
    return this.parts.registry.has(tenantId);
  }
  registryList(limit: number, after?: string): { data: RegisteredTenant[]; next: string | null } {
    return this.parts.registry.list(limit, after);
  }

  // ── Directory: the tenant's agents ─────────────────────────────────────────────────────────────
  /** The AgentDO reports every change of its record (directory snapshot + agentChangedNotification); the answer is its tenant snapshot, held from creation on. */
  async upsertAgentDirectory(agent: Agent, parentId: string | null = null): Promise<AgentSnapshot> {
    await this.parts.agentActivity.changed(agent, parentId);
    return this.parts.snapshots.for({ agentId: agent.id, kind: agent.kind });
  }
  listAgents(query: PageQuery & { includeChildren: boolean; filters?: AgentFilters }): Result<Page<Agent>> {
    return cursorPage(query.cursor, textKeyCursor, (after) => this.parts.directory.list(query.limit, after, query.includeChildren, query.filters));
  }
  hasAgent(agentId: string): boolean {
    return this.parts.directory.has(agentId);
  }
  /** An agent was erased: the tenant forgets its directory entry and agent-keyed rows, and audits it. */
  recordAgentErased(receipt: { agentId: string; reason: string; rows: Record<string, number> }): void {
    this.parts.erasure.agentErased(receipt);
  }
  /** `DELETE /v1/tenants/:id`: erases every agent and then every row of this tenant; the record survives in the operator audit object. */
  async eraseTenant(actor: string): Promise<Result<{ erasure: TenantErasure }>> {
    return this.parts.erasure.eraseTenant(actor);
  }

  // ── Journal: every write records one notification batch, then dispatches ─────────────
  /** `keyedId`: the id an API create under an Idempotency-Key derives; a record already holding it is the answer. */
  journalCreate(type: JournalType, input: unknown, meta?: JournalWriteMeta, keyedId?: string): Promise<JournalResult> {
    return this.parts.journal.create(type, input, meta, keyedId);
  }
  journalGet(type: JournalType, id: string): JournalResult {
    return this.parts.journal.get(type, id);
  }
  journalList(type: JournalType, query: JournalListQuery): Result<Page<JournalRecord>> {
    return this.parts.journal.list(type, query);
  }
  journalPatch(type: JournalType, id: string, input: unknown, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.parts.journal.patch(type, id, input, meta);
  }
  journalDelete(type: JournalType, id: string, version: number, meta?: JournalWriteMeta): Promise<JournalResult> {
    return this.parts.journal.delete(type, id, version, meta);
  }

  // ── Tools: saga phase 1 and the tenant's HTTP tools ────────────────────────────────────────────
  /** One tool call for an agent: a journal tool (idempotent by operationId, or a read) or `http:<name>`. */
  executeTool(invocation: ToolInvocation): Promise<ToolResultEnvelope> {
    return this.parts.tools.execute(invocation);
  }
  /** `GET /v1/tools`: the built-in registry, then the tenant's HTTP tools, then its MCP servers' tools. */
  listTools(): Promise<ToolListing[]> {
    return this.parts.toolCatalog.list();
  }
  /** Agents keep the tenant's HTTP tools in their snapshot: a registration is pushed to them before it is answered. */
  registerTenantTool(actor: string, body: RegisterToolBody, requestKey?: string): Promise<ToolRegistration> {
    return this.parts.snapshotChanges.answer(this.parts.toolCatalog.register(actor, body, requestKey), "all");
  }
  deleteTenantTool(actor: string, id: string): Promise<Result<{ tool: TenantTool }>> {
    return this.parts.snapshotChanges.answer(this.parts.toolCatalog.delete(actor, id), "all");
  }

  // ── MCP servers: their tools join the catalog as `mcp_<server>_<tool>` ──────────────
  /** `POST /v1/mcp-servers`: checks URL and secret, stores the server, lists its tools once (audited). */
  registerMcpServer(actor: string, body: RegisterMcpServerBody, keyedId?: string): Promise<Result<{ server: McpServer }>> {
    return this.parts.snapshotChanges.answer(this.parts.mcpServers.register(actor, body, keyedId), "all");
  }
  /** `GET /v1/mcp-servers`: live servers with their cached tool lists (never fetches). */
  listMcpServers(): McpServer[] {
    return this.parts.mcpServers.list();
  }
  /** `DELETE /v1/mcp-servers/:id`: soft delete (audited); its tools leave the catalog at once. */
  deleteMcpServer(actor: string, id: string): Promise<Result<{ server: McpServer }>> {
    return this.parts.snapshotChanges.answer(this.parts.mcpServers.delete(actor, id), "all");
  }

  // ── Alertness: subscriptions, inbound events, triggers, webhook sources ────────────────────────
  /** `keyedId`: the id a create under an Idempotency-Key derives; a subscription already holding it is the answer. */
  createSubscription(agentId: string, spec: SubscriptionSpec, keyedId?: string): Result<{ subscription: Subscription }> {
    return this.parts.alertness.subscribe(agentId, spec, keyedId);
  }
  listSubscriptions(agentId: string, query: PageQuery): Result<Page<Subscription>> {
    return this.parts.alertness.listSubscriptions(agentId, query);
  }
  deleteSubscription(agentId: string, subscriptionId: string): Result<{ subscription: Subscription }> {
    return this.parts.alertness.unsubscribe(agentId, subscriptionId);
  }
  /** `POST /v1/events`: record once per (source, deliveryId), then dispatch. */
  async ingestEvent(body: IngestEventBody): Promise<EventIngest> {
    return this.parts.alertness.ingestEvent(body);
  }
  /** `POST /v1/agents/:id/trigger`: provision (returns the active descriptor), rotate or revoke. */
  async manageTrigger(actor: string, agentId: string, action: TriggerAction, requestKey?: string): Promise<TriggerOutcome> {
    return this.parts.alertness.manageTrigger(actor, agentId, action, requestKey);
  }
  /** Trigger ingress: verifies the token hash; with a delivery id, also records the delivery. */
  admitTriggerDelivery(triggerId: string, tokenHash: string, deliveryId: string | null): TriggerAdmission {
    return this.parts.alertness.admitTriggerDelivery(triggerId, tokenHash, deliveryId);
  }
  async createWebhookSource(actor: string, body: CreateWebhookSourceBody, requestKey?: string): Promise<SourceCreation> {
    return this.parts.alertness.createWebhookSource(actor, body, requestKey);
  }
  listWebhookSources(query: PageQuery): Result<Page<WebhookSourceRecord>> {
    return this.parts.alertness.listWebhookSources(query);
  }
  getWebhookSource(id: string): Result<{ source: WebhookSourceRecord }> {
    return this.parts.alertness.getWebhookSource(id);
  }
  deleteWebhookSource(actor: string, id: string): Result<{ source: WebhookSourceRecord }> {
    return this.parts.alertness.deleteWebhookSource(actor, id);
  }
  /** Source ingress: verify, record once, then dispatch. */
  async receiveWebhook(delivery: SourceDelivery): Promise<SourceIngest> {
    return this.parts.alertness.receiveWebhook(delivery);
  }

  // ── Governance: policy, providers, the inference grant, brakes, audit ─────────
  /** The current governance policy (version 0 = the empty default). */
  getPolicy(): Policy {
    return this.parts.governance.policy();
  }
  /** `PUT /v1/policy`: validated, appended as the next version and audited (an identical body changes nothing). */
  putPolicy(actor: string, body: PolicyBody, ifMatch?: number): Promise<ReturnType<Governance["putPolicy"]>> {
    return this.parts.snapshotChanges.answer(this.parts.governance.putPolicy(actor, body, ifMatch), (written) => (written.ok && written.changed ? "all" : null));
  }
  createProviderSecret(actor: string, body: CreateProviderSecretBody, requestKey?: string): ReturnType<Governance["createSecret"]> {
    return this.parts.governance.createSecret(actor, body, requestKey);
  }
  listProviderSecrets(query: PageQuery): Result<Page<ProviderSecret>> {
    return this.parts.governance.listSecrets(query);
  }
  /** Master key rotation: re-seals at most `limit` provider secrets under the current key; how many remain. */
  resealSecrets(limit: number): Promise<{ resealed: number; remaining: number }> {
    return this.parts.governance.resealSecrets(limit);
  }
  revokeProviderSecret(actor: string, id: string): Result<{ secret: ProviderSecret }> {
    return this.parts.governance.revokeSecret(actor, id);
  }
  recordProviderConsent(actor: string, body: CreateConsentBody): ReturnType<Governance["recordConsent"]> {
    return this.parts.governance.recordConsent(actor, body);
  }
  listProviderConsents(query: PageQuery): Result<Page<ProviderConsent>> {
    return this.parts.governance.listConsents(query);
  }
  /** The inference gate's tenant half (provider → model → privacy receipt → secret); every denial is audited. */
  inferenceGrant(request: InferenceGrantRequest): Promise<Result<{ grant: InferenceGrant }>> {
    return this.parts.governance.inferenceGrant(request);
  }
  /** Hosts the tenant's agents may reach: configured provider endpoints, registered HTTP tools, the IdP's JWKS host and the OTLP collector. */
  async egressHosts(): Promise<string[]> {
    return this.parts.governance.egressHosts();
  }
  /** Where run traces are exported (OTLP endpoint, opened headers, includeBodies), or null; agents cache it briefly. */
  telemetryTarget(): ReturnType<Governance["telemetryTarget"]> {
    return this.parts.governance.telemetryTarget();
  }
  /** The tenant's identity provider for widget users (JWKS URL, issuer, audience), or null; the Worker caches it briefly. */
  identityProvider(): IdentityProvider | null {
    return this.parts.governance.identityProvider();
  }
  /** The retention bounds in force for this tenant (agents prune their own event logs with them). */
  retentionPolicy(): RetentionPolicy {
    return this.parts.retentionPolicy();
  }
  /**
   * `POST /v1/brakes`: engaged at once (audited; covered pending decisions are suspended). The agents it covers
   * hold the new snapshot before this answers, so none of them admits another wake.
   */
  engageBrake(actor: string, body: EngageBrakeBody, keyedId?: string): Promise<Result<{ brake: BrakeView }>> {
    return this.parts.snapshotChanges.answer(this.parts.brakes.engage(actor, body, keyedId));
  }
  listBrakes(query: PageQuery & { status?: "active" | "released" | undefined }): Result<Page<BrakeView>> {
    return cursorPage(query.cursor, numberKeyCursor, (before) => this.parts.brakes.list({ limit: query.limit, status: query.status, before }));
  }
  /** `keyed`: under an Idempotency-Key, a brake this actor already released answers as the release did. */
  releaseBrake(actor: string, id: string, keyed?: boolean): Promise<Result<{ brake: BrakeView }>> {
    return this.parts.snapshotChanges.answer(this.parts.brakes.release(actor, id, keyed));
  }
  /** What governs one agent's run right now, in one round trip: active brakes, the tenant's time zone, budgets, tool quotas and rate limits. */
  governanceFor(agent: { agentId: string; kind: string }): RunGovernance {
    return this.parts.governanceFor(agent);
  }
  /** What an agent keeps of its tenant: asked on its first run, then pushed on every change. */
  agentSnapshot(agent: { agentId: string; kind: string }): AgentSnapshot {
    return this.parts.snapshots.for(agent);
  }
  /** What spawn admission needs from the tenant, in one round trip: live children, brakes, time zone, budgets. */
  delegationContext(parent: { agentId: string; kind: string }): DelegationContext {
    return delegationContextFor(this.parts.db, parent.agentId, this.parts.governanceFor(parent));
  }
  /** Every spawn decision is a policy decision: audited (`agent.spawned` / `agent.spawn_denied`) and counted. */
  recordSpawnDecision(decision: SpawnDecisionRecord): void {
    recordSpawnDecision({ audit: this.parts.audit, metrics: this.parts.metrics }, decision);
  }
  /** Also an RPC: the operator audit object records tenant erasures through it. */
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
    this.parts.audit(actor, action, target, detail);
  }
  listAuditPage(query: PageQuery): Result<Page<AuditEntry>> {
    return auditPage(this.parts.db, query);
  }
  /** Operator audit object only: the newest audit entry about `target` with `action`. */
  findAudit(action: string, target: string): AuditEntry | null {
    return findAudit(this.parts.db, action, target);
  }

  // ── Decisions: ask_user questions, tool approvals (seed 002), brakes' keep-or-release ──────────
  /** Opens the decision for an agent's ask_user call (idempotent by operationId). */
  openQuestion(request: QuestionRequest): string {
    return this.parts.decisions.openQuestion(request);
  }
  /** `GET /v1/decisions`: tenant-wide, newest first; `agentIds` narrows to a widget token's agents. */
  listDecisions(query: DecisionListQuery): Result<Page<DecisionRecord>> {
    return this.parts.decisionDesk.list(query);
  }
  /** A person resolves a decision; the asking agent, the waiting saga or the brake hears of it (a released brake reaches its agents first). */
  resolveDecision(actor: string, id: string, body: ResolveBody, visibleAgents?: string[], widgetNamespace?: string): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    return this.parts.snapshotChanges.answer(this.parts.decisionDesk.resolve(actor, id, body, visibleAgents, widgetNamespace));
  }
  /** Before a mutating call's saga starts: does it need a person? Opens the decision once (by operationId). Trust never leaves. */
  requestToolApproval(request: ApprovalRequest): ApprovalAnswer {
    return this.parts.approvals.request(request);
  }
  /** The waiting saga reads its decision (JSON text: workflow step results must serialise shallowly). */
  toolApprovalState(decisionId: string): string {
    return JSON.stringify(this.parts.approvals.state(decisionId) satisfies ApprovalState);
  }
  /** The saga's wait ran out: apply the decision's timeout policy if it is due (recorded in the audit log). */
  toolApprovalTimedOut(decisionId: string): string {
    return JSON.stringify(this.parts.approvals.timedOut(decisionId) satisfies ApprovalState);
  }
  /** Double texting `interrupt`: cancels the interrupted run's unanswered tool approvals and wakes their sagas. */
  cancelToolApprovals(agentId: string, operationIds: string[]): Promise<string[]> {
    return this.parts.approvals.wakeSagas(this.parts.decisions.cancelApprovals(agentId, operationIds));
  }

  // ── Channels: the tenant event stream, outbound webhooks, metrics ─────────────────
  /** `GET /v1/events/stream` body: replay after `after`, then live; `agentIds` narrows it (widget tokens). */
  openTenantEvents(after: number, agentIds: string[] | null): Result<{ stream: ReadableStream<Uint8Array> }> {
    return this.parts.openTenantEvents(after, agentIds);
  }
  async createWebhook(actor: string, body: CreateWebhookBody, requestKey?: string): Promise<EndpointCreation> {
    return this.parts.channels.createWebhook(actor, body, requestKey);
  }
  listWebhooks(query: PageQuery): Result<Page<WebhookEndpoint>> {
    return this.parts.channels.listWebhooks(query);
  }
  getWebhook(id: string): Result<{ endpoint: WebhookEndpoint }> {
    return this.parts.channels.getWebhook(id);
  }
  deleteWebhook(actor: string, id: string): Result<{ endpoint: WebhookEndpoint }> {
    return this.parts.channels.deleteWebhook(actor, id);
  }
  listWebhookDeliveries(endpointId: string, query: PageQuery): Result<Page<WebhookDelivery>> {
    return this.parts.channels.listDeliveries(endpointId, query);
  }
  /** Outbound consumer, step 1: what to send for this delivery (or skip it). */
  prepareOutboundAttempt(deliveryId: string): Promise<PreparedAttempt> {
    return this.parts.outbound.prepare(deliveryId);
  }
  /** Outbound consumer, step 2: record the attempt; the answer says ack (delivered/dead) or retry after a delay. */
  recordOutboundAttempt(deliveryId: string, attempt: number, report: AttemptReport): ReturnType<OutboundDeliveries["record"]> {
    return this.parts.outbound.record(deliveryId, attempt, report);
  }
  /** The outbound DLQ backstop. */
  deadLetterOutbound(deliveryId: string): void {
    this.parts.outbound.deadLetter(deliveryId);
  }
  /** Everything the tenant learns from an agent's run, in one call: events, activity, outcomes, DO calls; answers the snapshot version. */
  reportRun(agentId: string, report: RunReport): Promise<Result<{ recorded: number; snapshotVersion: number }>> {
    return this.parts.runReports.record(agentId, report);
  }
  /** GET /v1/metrics body (Prometheus text exposition); `calls` are the DO calls the reading isolate counted for this tenant. */
  metricsText(calls: DoCallCount[] = []): string {
    return this.parts.runReports.metricsText(calls);
  }

  // ── Test and bench seams (refused unless VIGIL_FAULTS / VIGIL_BENCH=enabled) ───────────────────
  /** Arms a fault point (./channels/run-reports.ts `RunReportFault`) to throw the next `times` times. */
  armFault(point: string, times = 1): boolean {
    return this.parts.faults.arm(point, times);
  }
  /** This tenant's decision tick length in ms (null: config default). */
  setDecisionTickMs(ms: number | null): boolean {
    return this.seams.run("clocks", () => this.parts.approvals.setTickMs(ms));
  }
  /** Every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    return this.seams.refused("dumps") ?? { ok: true, tables: await dumpTables(this.ctx.storage) };
  }
  /** API key lookups this object has served since it started. */
  keyLookups(): number | null {
    return this.seams.on("dumps") ? this.parts.clientAuth.lookups : null;
  }
  /** One retention pass as if the clock read `nowMs`. */
  pruneNow(nowMs: number): Result<TenantPruneOutcome> {
    return this.seams.refused("clocks") ?? { ok: true, ...this.parts.pruneRetention(nowMs) };
  }
  /** Bulk subscriptions, dry-run matching, counts (bench/alertness.mjs). */
  benchAlertness(op: AlertnessBenchOp): Result<{ answer: AlertnessBenchAnswer }> {
    return this.seams.benchRefused() ?? runAlertnessBenchOp({ db: this.parts.db, dispatcher: this.parts.dispatcher, subscribe: (agentId, spec) => this.createSubscription(agentId, spec), sql: this.ctx.storage.sql }, op);
  }
}
