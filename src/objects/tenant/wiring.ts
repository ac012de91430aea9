import { config } from "../../config";
import { deploymentMode } from "../../core/egress/deployment-mode";
import { retryScheduleFrom } from "../../core/egress/outbound-delivery";
import * as schema from "../../db/tenant-schema";
import type { Env } from "../../env";
import type { Tenant } from "../../schema/admin/auth";
import migrations from "../../../migrations/tenant";
import type { Hook } from "../shared/hooks";
import { seamOn } from "../../core/runtime/seams";
import { FaultSeam, InjectedCrash } from "../shared/seams";
import { openDatabase } from "../shared/sqlite";
import { TenantRetention, type TenantPruneOutcome } from "./retention";
import { cursorExpired, expiredCursor, type RetentionPolicy } from "../../core/memory/retention";
import { failure, type Result } from "../../core/runtime/result";
import { TenantAccess, ClientAuth, IdempotencyStore, ApiKeys, readTenant, TenantRegistry, joinRegistryOnce, TENANT_REGISTRY_OBJECT } from "./access";
import { Alertness, Dispatcher, InboundEvents, NotificationLog, SubscriptionStore, ExternalTriggers, WebhookSources } from "./alertness";
import { OutboundChannels, EventFeed, TenantMetrics, OutboundDeliveries, RunReports, TenantEventLog, WebhookEndpoints } from "./channels";
import { Approvals, BrakeDecisions, Decisions, DecisionDesk, DecisionResolution } from "./decisions";
import { AgentActivity, AgentDirectory, TenantErasures } from "./directory";
import { writeAudit, TenantBrakes, Governance, AgentSnapshots, type SnapshotAudience, SnapshotChanges, runGovernanceFor } from "./governance";
import type { RunGovernance } from "../../schema/contracts";
import { agentStub, tenantStub } from "../shared/stubs";
import { Journal } from "./journal";
import { McpCalls, McpServers, ToolCatalog, ToolExecutor, TenantTools } from "./tools";
import type { Audit, TenantDb } from "./types";

/**
 * One tenant's parts, wired to its SQLite, its queues and its one alarm. Every part is a named field
 * built with explicit arguments, in dependency order; the calls that must reach a part built later
 * (approvals read the policy and HTTP tools lazily; the journal, brakes and activity dispatch or
 * publish through parts built after them) go through `this.<part>` and are marked "back-edge".
 */
export class TenantWiring {
  readonly db: TenantDb;
  /** Test fault points (armed only with VIGIL_FAULTS): a run report's application. */
  readonly faults: FaultSeam;
  readonly keys: ApiKeys;
  readonly directory: AgentDirectory;
  readonly idempotency: IdempotencyStore;
  readonly clientAuth: ClientAuth;
  readonly access: TenantAccess;
  /** The platform's tenant registry: used only in the registry object (TENANT_REGISTRY_OBJECT). */
  readonly registry: TenantRegistry;
  readonly approvals: Approvals;
  readonly decisions: Decisions;
  readonly notifications: NotificationLog;
  readonly journal: Journal;
  readonly tenantTools: TenantTools;
  readonly tools: ToolExecutor;
  readonly toolCatalog: ToolCatalog;
  /** Remote MCP servers: registrations, cached tool lists, and calls (at-most-once when mutating). */
  readonly mcpServers: McpServers;
  readonly mcpCalls: McpCalls;
  readonly subscriptions: SubscriptionStore;
  readonly metrics: TenantMetrics;
  readonly governance: Governance;
  readonly inboundEvents: InboundEvents;
  readonly triggers: ExternalTriggers;
  readonly webhookSources: WebhookSources;
  readonly dispatcher: Dispatcher;
  readonly alertness: Alertness;
  readonly brakeDecisions: BrakeDecisions;
  readonly brakes: TenantBrakes;
  /** The versioned snapshot agents keep, pushed to them when it changes. */
  readonly snapshots: AgentSnapshots;
  /** Changes agents' snapshots must reflect; writes that make them are answered after the push. */
  readonly snapshotChanges: SnapshotChanges;
  readonly tenantEvents: TenantEventLog;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly outbound: OutboundDeliveries;
  readonly channels: OutboundChannels;
  readonly feed: EventFeed;
  /** Agents' per-run reports and the metrics exposition. */
  readonly runReports: RunReports;
  private reportTenantId: string | undefined;
  readonly agentActivity: AgentActivity;
  readonly decisionResolution: DecisionResolution;
  readonly decisionDesk: DecisionDesk;
  readonly erasure: TenantErasures;
  /** Retention of the tables that grow with use (pruned on the alarm). */
  readonly retention: TenantRetention;
  /** The one audit writer every part is given. */
  readonly audit: Audit;
  /** The object's one alarm: dispatch retries, timer brakes, outbound deliveries not yet queued. */
  readonly onAlarm: Hook[];

  constructor(
    private readonly ctx: DurableObjectState,
    env: Env,
  ) {
    const mode = deploymentMode(env.VIGIL_MODE);
    const faults = seamOn(env, "faults");
    this.faults = new FaultSeam(faults, (point) => new InjectedCrash(`injected crash at ${point}`));
    const retryLater = (delayMs: number) => this.armAlarmAt(Date.now() + delayMs);
    const dispatch = () => this.dispatcher.dispatchPending();
    this.db = openDatabase(ctx, schema, migrations);
    this.audit = (actor, action, target, detail) => writeAudit(this.db, actor, action, target, detail);
    // Access: API keys, request budgets, idempotency records, the agent directory.
    this.keys = new ApiKeys(this.db);
    this.directory = new AgentDirectory(this.db);
    this.idempotency = new IdempotencyStore(this.db);
    this.clientAuth = new ClientAuth(this.keys, () => this.tenant() !== null);
    this.access = new TenantAccess({ db: this.db, keys: this.keys, audit: this.audit });
    this.registry = new TenantRegistry(ctx.storage.kv);
    joinRegistryOnce(ctx, () => this.tenant(), (entry) => tenantStub(env, TENANT_REGISTRY_OBJECT).registryRecord(entry));
    // Approvals: trust, tool approvals, decision ticks. back-edge: reads the policy and HTTP tools lazily.
    this.approvals = new Approvals({
      db: this.db,
      env,
      policy: () => this.governance.policy(),
      httpInputSchema: (name) => (this.tenantTools.descriptors().find((tool) => tool.name === `http:${name}` || tool.name === name)?.inputSchema as Record<string, unknown> | undefined) ?? this.mcpServers.resolve(name)?.tool.inputSchema ?? null,
    });
    this.decisions = new Decisions(this.approvals.decisionsDeps());
    /** Change provenance shared by every writer (journal, events, webhooks, agent notifications). */
    this.notifications = new NotificationLog(this.db, () => this.tenant()?.id ?? "tenant");
    /** The journal domain: the tenant's source-of-truth records; every write dispatches after it commits (back-edge: the dispatcher). */
    this.journal = new Journal(this.db, this.notifications, dispatch);
    /** Tool execution (saga phase 1 and reads) and the tenant's HTTP tools. */
    this.tenantTools = new TenantTools(this.db, env, mode, this.audit);
    this.mcpServers = new McpServers({
      db: this.db,
      mode,
      audit: this.audit,
      openSecret: (id, provider) => this.governance.openSecret(id, provider),
      // A refreshed list reaches the agents' snapshots in the background (the refresh answered no request of theirs).
      toolsChanged: () => {
        this.snapshotChanges.changed("all");
        ctx.waitUntil(this.snapshotChanges.publish());
      },
      background: (work) => ctx.waitUntil(work),
    });
    const crashingMcpTools = faults ? (env.VIGIL_FAULT_MCP_ABORT ?? "").split(",").filter(Boolean) : [];
    this.mcpCalls = new McpCalls({
      db: this.db,
      servers: this.mcpServers,
      audit: this.audit,
      flush: () => ctx.storage.sync(),
      // Test seam: the object is reset between send and record, as an eviction or a crash there would.
      ...(crashingMcpTools.length > 0 && { crashAfterSend: (toolName: string) => (crashingMcpTools.includes(toolName) ? ctx.abort(`injected crash after sending ${toolName}`) : undefined) }),
    });
    this.tools = new ToolExecutor({
      db: this.db,
      journal: this.journal,
      timeZone: () => this.tenant()?.timeZone ?? "UTC",
      callHttpTool: (inv) => this.tenantTools.call(inv),
      callMcpTool: (inv) => this.mcpCalls.call(inv),
      agentLifecycle: (agentId) => this.directory.lifecycle(agentId),
    });
    this.toolCatalog = new ToolCatalog({ tenantTools: this.tenantTools, mcpServers: this.mcpServers, audit: this.audit });
    /** Agents' subscriptions and the materialized token index. */
    this.subscriptions = new SubscriptionStore(this.db);
    /** Counters for GET /v1/metrics. */
    this.metrics = new TenantMetrics(this.db);
    /** Policy versions, provider secrets, privacy receipts, inference grants. */
    this.governance = new Governance(this.db, {
      masterKey: env,
      mode,
      audit: this.audit,
      toolHosts: () => [...this.tenantTools.list().map((tool) => new URL(tool.url).host), ...this.mcpServers.hosts()],
    });
    this.inboundEvents = new InboundEvents(this.db, this.notifications);
    /** Agents' external triggers (holon) and the tenant's signed webhook sources. */
    this.triggers = new ExternalTriggers(this.db, env, () => this.tenant()!.id);
    this.webhookSources = new WebhookSources(this.db, this.notifications, env, () => this.tenant()!.id);
    /** Matches recorded, undispatched notification batches against the subscription index and queues one wake per match. */
    this.dispatcher = new Dispatcher({ db: this.db, notifications: this.notifications, subscriptions: this.subscriptions, queue: env.WAKE_QUEUE, tenantId: () => this.tenant()?.id ?? "", audit: this.audit, retryLater, snapshotVersion: () => this.snapshots.version() });
    this.alertness = new Alertness({ subscriptions: this.subscriptions, inboundEvents: this.inboundEvents, triggers: this.triggers, webhookSources: this.webhookSources, audit: this.audit, dispatch });
    /** Brakes / kill switches and the keep-or-release decisions they may open. */
    this.brakeDecisions = new BrakeDecisions(this.db);
    this.brakes = new TenantBrakes({
      db: this.db,
      audit: this.audit,
      openDecision: (request) => this.brakeDecisions.open(request),
      suspendDecisions: (filter) => this.decisions.suspendPending(filter),
      resumeDecisions: (filter) => this.decisions.resumeSuspended(filter),
      armAlarmAt: (atMs) => this.armAlarmAt(atMs),
      // back-edge: brake changes reach the tenant event feed built below.
      publish: (type, data) => {
        this.snapshotChanges.changed(audienceOfBrake(data));
        ctx.waitUntil(this.feed.recordTenantEvent(type, null, null, data).then(() => undefined));
      },
    });
    this.snapshots = new AgentSnapshots({
      db: this.db,
      governanceFor: (agent) => this.governanceFor(agent),
      // Only the tenant's own tools vary per tenant: its HTTP tools and its MCP servers' cached lists.
      httpTools: () => [...this.tenantTools.descriptors(), ...this.mcpServers.cachedListings()],
      exportsTraces: () => this.governance.policy().telemetry !== undefined,
      liveAgents: () => this.directory.liveAgents(),
      deliver: (agentId, snapshot) => agentStub(env, this.tenant()?.id ?? "", agentId).applyTenantSnapshot(snapshot),
    });
    this.snapshotChanges = new SnapshotChanges(this.snapshots);
    /** The tenant-wide event log (GET /v1/events/stream) and the outbound webhooks hanging off it. */
    // Agent events are stored as references and hydrated from their agent on replay.
    this.tenantEvents = new TenantEventLog(this.db, (agentId, after, limit) => agentStub(env, this.tenant()?.id ?? "", agentId).listEvents(after, limit));
    this.webhookEndpoints = new WebhookEndpoints(this.db, env, mode);
    this.outbound = new OutboundDeliveries({
      db: this.db,
      endpoints: this.webhookEndpoints,
      queue: env.OUTBOUND_QUEUE,
      tenantId: () => this.tenant()?.id ?? "",
      schedule: retryScheduleFrom(config.outboundWebhooks, env.VIGIL_OUTBOUND_RETRY, seamOn(env, "settings")),
      retryLater,
      audit: this.audit,
    });
    this.channels = new OutboundChannels({ endpoints: this.webhookEndpoints, outbound: this.outbound, audit: this.audit });
    this.feed = new EventFeed(this.db, this.tenantEvents, this.outbound);
    this.agentActivity = new AgentActivity({ db: this.db, directory: this.directory, notifications: this.notifications, subscriptions: this.subscriptions,
      audit: this.audit,
      dispatch,
      cancelOpenWork: (agentId) => this.approvals.wakeSagas(this.decisions.cancelForAgent(agentId)).then(() => undefined),
    });
    this.runReports = new RunReports({
      db: this.db,
      feed: this.feed,
      metrics: this.metrics,
      recordActivity: (agent, activity) => this.agentActivity.recordRun(agent, activity),
      dispatch,
      snapshotVersion: () => this.snapshots.version(),
      // The id is only the DO-call meter's key, and a tenant's id never changes (the object is
      // addressed by it), so the row is read once per object lifetime instead of once per report.
      tenantId: () => (this.reportTenantId ??= this.tenant()?.id) ?? "",
      nothingToDispatch: () => this.dispatcher.nothingToDispatch(),
      fault: (point) => this.faults.hit(point),
    });
    this.decisionResolution = new DecisionResolution({
      env,
      tenantId: () => this.tenant()!.id,
      decisions: this.decisions,
      brakeDecisions: this.brakeDecisions,
      brakes: this.brakes,
      approvals: this.approvals,
      feed: this.feed,
    });
    this.decisionDesk = new DecisionDesk({
      decisions: this.decisions,
      resolution: this.decisionResolution,
      visitorApprovableTools: () => this.governance.policy().visitorApprovableTools,
      audit: (actor, action, target, detail) => this.audit(actor, action, target, detail),
    });
    this.retention = new TenantRetention(this.db);
    this.erasure = new TenantErasures({
      db: this.db, storage: ctx.storage, migrations, env, tenant: () => this.tenant(), audit: this.audit,
      forgetRows: () => {
        this.webhookEndpoints.forgetCached();
        this.snapshots.forget();
      },
    });
    this.onAlarm = [
      // Subscription dispatch after a failed queue send (armed by the dispatcher).
      { name: "retry dispatch", run: () => this.dispatcher.dispatchPending() },
      // Timer brakes whose time has come are recorded as released (and re-arm the alarm for the next one).
      { name: "sweep timer brakes", run: () => this.brakes.sweep() },
      // Changes made on the alarm (timer releases) reach the agents that keep a snapshot.
      { name: "push snapshot changes", run: () => this.snapshotChanges.publish() },
      // Outbound deliveries whose queue message could not be sent yet.
      { name: "queue unsent deliveries", run: () => this.outbound.sendUnqueued() },
      // MCP tool lists past their TTL are fetched again, so agents' snapshots don't keep a stale list.
      { name: "refresh MCP tool lists", run: () => void this.mcpServers.refreshExpired() },
      // Tables that grow with use, one bounded batch per table per pass.
      { name: "prune retention", run: () => void this.pruneRetention() },
    ];
    // Retention runs on the alarm; an active tenant always has one within the interval (arming never delays an earlier one).
    this.armAlarmAt(Date.now() + config.retention.intervalSeconds * 1_000);
  }

  /** The tenant record, or null before initTenant. */
  tenant(): Tenant | null {
    return readTenant(this.db);
  }

  /** The tenant event stream after `after` (0: everything still kept); a cursor below the pruned mark would skip events unseen. */
  openTenantEvents(after: number, agentIds: string[] | null): Result<{ stream: ReadableStream<Uint8Array> }> {
    if (!this.tenant()) return failure("not_found", "tenant not found");
    const prunedThrough = this.retention.prunedThrough();
    if (after > 0 && cursorExpired(after, prunedThrough)) return expiredCursor(prunedThrough);
    return { ok: true, stream: this.tenantEvents.subscribe(after, agentIds) };
  }

  /** One bounded pruning pass; re-arms soon while a table had more than a batch due, later while anything is left. */
  pruneRetention(nowMs: number = Date.now()): TenantPruneOutcome {
    const outcome = this.retention.prune(this.retentionPolicy(), nowMs);
    if (outcome.more) this.armAlarmAt(Date.now() + 1_000);
    else if (outcome.pending) this.armAlarmAt(Date.now() + config.retention.intervalSeconds * 1_000);
    return outcome;
  }

  /** What governs one agent's run right now: active brakes, the tenant's time zone, budgets, tool quotas and rate limits. */
  governanceFor(agent: { agentId: string; kind: string }): RunGovernance {
    return runGovernanceFor({ brakes: this.brakes, governance: this.governance, timeZone: this.tenant()?.timeZone ?? "UTC" }, agent);
  }

  /** The retention bounds in force for this tenant (agents prune their own event logs with them). */
  retentionPolicy(): RetentionPolicy {
    return TenantRetention.policy(this.governance.policy().retention);
  }

  /** One alarm serves dispatch retries, timer brakes and outbound retries: arming never pushes an earlier alarm later. */
  private armAlarmAt(atMs: number): void {
    const storage = this.ctx.storage;
    const armed = storage.getAlarm().then((current) => (current === null || current > atMs ? storage.setAlarm(atMs) : undefined));
    this.ctx.waitUntil(armed.catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "arming the tenant alarm failed", error: String(error) }))));
  }
}

/** A brake change concerns the agent it names, the agents of the kind it names, or (all, tool) every agent. */
function audienceOfBrake(data: Record<string, unknown>): SnapshotAudience {
  if (data.scope === "agent" && typeof data.target === "string") return { agentId: data.target };
  if (data.scope === "kind" && typeof data.target === "string") return { kind: data.target };
  return "all";
}
