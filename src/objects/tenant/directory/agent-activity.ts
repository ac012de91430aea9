import { SemanticKeys, tokens, type TypedToken } from "../../../core/wakes/tokens";
import { indexProbes } from "../../../core/wakes/subscription-index";
import type { Agent } from "../../../schema/agents/agents";
import type { AgentRunActivity } from "../../../schema/contracts";
import type { AgentDirectory } from "./directory";
import type { NotificationLog, SubscriptionStore } from "../alertness";
import type { TenantDb } from "../types";

/** Tokens of an agent notification: its semantic keys, its id, and kind/lifecycle subtypes to filter on. */
export function agentTokens(agent: Pick<Agent, "id" | "kind" | "lifecycle">, semanticKeys: string[]): TypedToken[] {
  return [
    ...semanticKeys.map((key) => tokens.semanticKey(key)),
    tokens.entityId(agent.id),
    tokens.subtype("agent.kind", agent.kind),
    tokens.subtype("agent.lifecycle", agent.lifecycle),
  ];
}


const LIFECYCLE_AUDIT: Record<string, string> = { destroyed: "agent.destroyed", dormant: "agent.paused", active: "agent.resumed" };

export interface AgentActivityDeps {
  db: TenantDb;
  directory: AgentDirectory;
  notifications: NotificationLog;
  subscriptions: SubscriptionStore;
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void;
  /** Queues the wakes the recorded batches match (called after their transaction committed). */
  dispatch(): Promise<void>;
  /** Destroy means stop: the agent's open decisions are cancelled, and the sagas waiting on them read that and end. */
  cancelOpenWork(agentId: string): Promise<void>;
}

/**
 * What agents report to their tenant: record changes (directory snapshot + agentChangedNotification)
 * and completed runs (agentStateChanged + agentMessageAppended), so agents can follow each other.
 * `changed` dispatches the recorded batches after they commit; a run's activity is recorded with its
 * report (channels/run-reports.ts), which dispatches.
 */
export class AgentActivity {
  constructor(private readonly deps: AgentActivityDeps) {}

  /** The AgentDO reports every change of its record. */
  async changed(agent: Agent, parentId: string | null): Promise<void> {
    this.recordChange(agent, parentId);
    if (agent.lifecycle === "destroyed") await this.deps.cancelOpenWork(agent.id);
    await this.deps.dispatch();
  }

  recordChange(agent: Agent, parentId: string | null): void {
    const { db, directory, notifications, subscriptions } = this.deps;
    const previousLifecycle = subscriptions.agentLifecycle(agent.id);
    db.transaction((tx) => {
      directory.upsert(agent, parentId);
      notifications.recordLocal(tx as unknown as TenantDb, [{ payloadType: "agent", payloadId: `${agent.id}@v${agent.version}` }], agentTokens(agent, [SemanticKeys.agentChangedNotification]), {
        source: `agent:${agent.id}`,
        authority: "runtime_instruction",
      });
    });
    // Destroy tombstones the agent's subscriptions at once: no new subscription wake can match it.
    if (agent.lifecycle === "destroyed") subscriptions.removeAllForAgent(agent.id);
    // Lifecycle changes after creation (pause, resume, destroy) are audited.
    if (previousLifecycle && previousLifecycle !== agent.lifecycle) {
      this.deps.audit(`agent:${agent.id}`, LIFECYCLE_AUDIT[agent.lifecycle] ?? "agent.lifecycle_changed", agent.id, { from: previousLifecycle, to: agent.lifecycle });
    }
  }

  /** `cascadeDepth`: one more agent hop than the wake that caused the run (see config.run.maxCascadeDepth). */
  /** Returns whether a batch was recorded (the notification log also marks it unseen, which is what the report path reads). */
  recordRun(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): boolean {
    const writes = [
      { payloadType: "agentState", payloadId: `${agent.id}@${activity.stateRevision}` },
      ...activity.messageIds.map((id) => ({ payloadType: "agentMessage", payloadId: id })),
    ];
    const keys = [SemanticKeys.agentStateChangedNotification, ...(activity.messageIds.length > 0 ? [SemanticKeys.agentMessageAppendedNotification] : [])];
    const typedTokens = agentTokens(agent, keys);
    // Storage per turn: a run no other agent's subscription could match records nothing. The
    // dispatcher would find no candidate through these very probes (and never wakes an agent for its own
    // activity), so the batch and its change units would only be written, dispatched to nobody and pruned.
    if (!this.anyOtherSubscriber(agent.id, typedTokens)) return false;
    this.deps.db.transaction((tx) => {
      this.deps.notifications.recordLocal(tx as unknown as TenantDb, writes, typedTokens, { source: `agent:${agent.id}`, authority: "runtime_instruction", cascadeDepth: activity.cascadeDepth ?? 1 });
    });
    return true;
  }

  /** The dispatcher's prefilter probes (one indexed lookup per token), asked in one statement. */
  private anyOtherSubscriber(agentId: string, typedTokens: TypedToken[]): boolean {
    return this.deps.subscriptions.anyOtherSubscriber(indexProbes({ typedTokens }), agentId);
  }
}
