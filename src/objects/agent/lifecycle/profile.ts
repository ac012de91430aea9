import { eq, sql } from "drizzle-orm";
import { admitIngress, transition, type LifecycleCommand } from "../../../core/runtime/lifecycle";
import * as schema from "../../../db/agent-schema";
import { failure, type Result } from "../../../core/runtime/result";
import type { Agent, AgentLineage, AgentState, CreateAgentBody, PatchAgentBody } from "../../../schema/agents/agents";
import { nowIso } from "../../shared/sqlite";
import type { EventLog } from "../events";
import { toAgent, toState } from "../rows";
import type { AgentDb } from "../types";

const META = (db: AgentDb) => db.select().from(schema.agentMeta).prepare();
const STATE = (db: AgentDb) => db.select().from(schema.agentState).prepare();
const s = schema.agentState;
const WAKE_UPDATE = (db: AgentDb) =>
  db
    .update(s)
    .set({
      revision: sql`${s.revision} + 1`,
      lastWakeAt: sql`${sql.placeholder("at")}`,
      // No head given keeps the stored one (a message id is never NULL); a failure counts up, a success resets.
      recentHeadMessageId: sql`coalesce(${sql.placeholder("head")}, ${s.recentHeadMessageId})`,
      consecutiveFailureCount: sql`CASE WHEN ${sql.placeholder("failed")} THEN ${s.consecutiveFailureCount} + 1 ELSE 0 END`,
    })
    .returning()
    .prepare();

/** Identity, configuration and lifecycle of the one agent this DO holds. */
export class AgentProfile {
  /** Read several times by every turn (admission, run, context, report), so built once (issue 12 §8). */
  private readonly metaQuery;
  private readonly stateQuery;
  /** Every run's end (`recordWake`): one fixed shape, built once (session 11); what varies per call is bound. */
  private readonly wakeUpdate;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
  ) {
    this.metaQuery = META(db);
    this.stateQuery = STATE(db);
    this.wakeUpdate = WAKE_UPDATE(db);
  }

  /** The agent as stored (frozen: callers may share it), or null before it exists and after an erasure. */
  get(): Agent | null {
    const row = this.metaQuery.get();
    return row ? freezeAgent(toAgent(row)) : null;
  }

  /** The owning tenant as stored with the agent ("" before it exists). */
  tenantId(): string {
    return this.metaQuery.get()?.tenantId ?? "";
  }

  state(): AgentState | null {
    const row = this.stateQuery.get();
    return row ? toState(row) : null;
  }

  /** `lineage`: set only for a spawned child (SPEC §3 delegation), never through the public API. */
  create(tenantId: string, agentId: string, body: CreateAgentBody, lineage: AgentLineage | null = null): Result<{ agent: Agent }> {
    if (this.get()) return failure("conflict", `agent ${agentId} already exists`);
    const now = nowIso();
    this.db.transaction((tx) => {
      tx.insert(schema.agentMeta)
        .values({
          id: agentId,
          tenantId,
          kind: body.kind,
          displayName: body.displayName,
          lifecycle: body.start ? "active" : "created",
          mode: body.mode,
          allowedCategoryIds: body.allowedCategoryIds,
          config: {
            modelId: body.model,
            instructions: body.instructions ?? null,
            playbook: body.playbook ?? null,
            modelOptions: body.modelOptions,
            capabilities: body.capabilities ?? null,
            fallbackModels: body.fallbackModels,
            controlMode: body.controlMode,
            budgets: body.budgets ?? null,
            lineage,
            doubleTexting: body.doubleTexting,
          },
          version: 1,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      tx.insert(schema.agentState)
        .values({ agentId, revision: 0, consecutiveFailureCount: 0, slots: {} })
        .run();
    });
    const agent = this.get()!;
    this.events.append("lifecycle.changed", null, { from: null, to: agent.lifecycle, agent });
    return { ok: true, agent };
  }

  patch(body: PatchAgentBody): Result<{ agent: Agent }> {
    const current = this.get();
    if (!current) return failure("not_found", "agent not found");
    if (current.lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed and cannot change");
    if (body.version !== undefined && body.version !== current.version) {
      return failure("version_conflict", `version is ${current.version}, the request expected ${body.version}`);
    }
    const config = { ...current.config };
    if (body.model !== undefined) config.modelId = body.model;
    if (body.instructions !== undefined) config.instructions = body.instructions;
    if (body.playbook !== undefined) config.playbook = body.playbook;
    if (body.modelOptions !== undefined) config.modelOptions = body.modelOptions;
    if (body.capabilities !== undefined) config.capabilities = body.capabilities;
    if (body.fallbackModels !== undefined) config.fallbackModels = body.fallbackModels;
    if (body.controlMode !== undefined) config.controlMode = body.controlMode;
    if (body.budgets !== undefined) config.budgets = body.budgets;
    if (body.doubleTexting !== undefined) config.doubleTexting = body.doubleTexting;
    this.db
      .update(schema.agentMeta)
      .set({
        displayName: body.displayName ?? current.displayName,
        mode: body.mode ?? current.mode,
        allowedCategoryIds: body.allowedCategoryIds ?? current.allowedCategoryIds,
        config,
        version: current.version + 1,
        updatedAt: nowIso(),
      })
      .where(eq(schema.agentMeta.id, current.id))
      .run();
    const agent = this.get()!;
    this.events.append("agent.changed", null, { agent });
    return { ok: true, agent };
  }

  command(command: LifecycleCommand): Result<{ agent: Agent; changed: boolean }> {
    const current = this.get();
    if (!current) return failure("not_found", "agent not found");
    const result = transition(current.lifecycle, command);
    if (!result.ok) {
      return failure(result.code, `cannot ${command} an agent that is ${current.lifecycle}`);
    }
    if (!result.changed) return { ok: true, agent: current, changed: false };
    const now = nowIso();
    this.db
      .update(schema.agentMeta)
      .set({ lifecycle: result.to, version: current.version + 1, updatedAt: now, destroyedAt: result.to === "destroyed" ? now : null })
      .where(eq(schema.agentMeta.id, current.id))
      .run();
    const agent = this.get()!;
    this.events.append("lifecycle.changed", null, { from: result.from, to: result.to, agent });
    return { ok: true, agent, changed: true };
  }

  /** Whether new work may enter now; the failure explains what to do instead. */
  admit(): Result<{ agent: Agent }> {
    const agent = this.get();
    if (!agent) return failure("not_found", "agent not found");
    const verdict = admitIngress(agent.lifecycle);
    if (verdict.admit) return { ok: true, agent };
    const guidance = {
      agent_dormant: "the agent is paused (dormant); resume it with POST /v1/agents/{id}/resume first",
      agent_not_started: "the agent was created with start=false; resume it with POST /v1/agents/{id}/resume first",
      agent_destroyed: "the agent is destroyed",
    }[verdict.code];
    return failure(verdict.code, guidance.replace("{id}", agent.id));
  }

  /** Replaces the slots document (already validated by the core) and bumps the state revision. */
  writeSlots(slots: Record<string, unknown>): AgentState {
    const state = this.state()!;
    this.db.update(schema.agentState).set({ slots, revision: state.revision + 1 }).run();
    return this.state()!;
  }

  sleepUntil(until: string): AgentState {
    const state = this.state()!;
    this.db.update(schema.agentState).set({ sleepUntil: until, revision: state.revision + 1 }).run();
    return this.state()!;
  }

  /** Every run's end: one statement (the update returns the row) instead of read, update, read (issue 12 §8). */
  recordWake(at: string, headMessageId: string | null, failed: boolean): AgentState {
    const row = this.wakeUpdate.get({ at, head: headMessageId, failed: failed ? 1 : 0 });
    return toState(row!);
  }
}

/** The kept agent is shared by every caller: frozen (with its config) so that none can change it for the others. */
function freezeAgent(agent: Agent): Agent {
  Object.freeze(agent.config);
  Object.freeze(agent.allowedCategoryIds);
  return Object.freeze(agent);
}
