import type { LifecycleCommand } from "../../../core/runtime/lifecycle";
import type { Result } from "../../../core/runtime/result";
import type { Agent, CreateAgentBody, PatchAgentBody } from "../../../schema/agents/agents";
import type { Drainer, WakeInbox } from "../wakes";
import type { AgentErasure } from "./erasure";
import type { AgentProfile } from "./profile";
import type { Timers } from "../timers";

export interface AgentLifecycleDeps {
  profile: AgentProfile;
  timers: Timers;
  erasure: AgentErasure;
  inbox: WakeInbox;
  drain: Drainer;
  /** Ends every tool call still out as cancelled (destroy). */
  cancelSagas(): Promise<unknown>;
  tenantId(): string;
  upsertDirectory(tenantId: string, agent: Agent): Promise<void>;
}

/** Profile changes with their consequences: the tenant's directory, timers, erasure and queued wakes. */
export class AgentLifecycle {
  constructor(private readonly deps: AgentLifecycleDeps) {}

  async create(tenantId: string, agentId: string, body: CreateAgentBody): Promise<Result<{ agent: Agent }>> {
    const result = this.deps.profile.create(tenantId, agentId, body);
    if (result.ok) await this.syncDirectory(tenantId, result.agent);
    return result;
  }

  /** The tenant's directory entry for this agent (with its parent, for a spawned child). */
  syncDirectory(tenantId: string, agent: Agent): Promise<void> {
    return this.deps.upsertDirectory(tenantId, agent);
  }

  async patch(body: PatchAgentBody): Promise<Result<{ agent: Agent }>> {
    const result = this.deps.profile.patch(body);
    if (result.ok) await this.syncDirectory(this.deps.tenantId(), result.agent);
    return result;
  }

  async apply(command: LifecycleCommand): Promise<Result<{ agent: Agent }>> {
    const { profile, timers, erasure, inbox, drain } = this.deps;
    const result = profile.command(command);
    if (!result.ok) return result;
    if (command === "destroy") await timers.tombstoneAll();
    if (command === "destroy" && result.changed) await erasure.scheduleAfterDestroy();
    if (result.changed) await this.syncDirectory(this.deps.tenantId(), result.agent);
    // After the directory knows: the tenant has cancelled the agent's decisions and refuses its phase 1 from here on.
    if (command === "destroy") await this.deps.cancelSagas();
    // Destroy: queued wakes settle as skipped_destroyed now rather than lingering.
    if (command === "destroy" && inbox.pendingCount() > 0) drain.start();
    return { ok: true, agent: result.agent };
  }
}
