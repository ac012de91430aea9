import { failure, type Result } from "../../../core/runtime/result";
import type { Agent, AgentLineage, CreateAgentBody } from "../../../schema/agents/agents";
import type { AgentScheduler, AgentProfile, AgentLifecycle } from "../lifecycle";
import type { ChildReports } from "./child-report";
import type { ChildReport, ChildWake, Spawner } from "./spawn";
import type { WakeAdmission, WakeInbox } from "../wakes";

export interface DelegationDeps {
  profile: AgentProfile;
  inbox: WakeInbox;
  spawner: Spawner;
  childReports: ChildReports;
  lifecycle: AgentLifecycle;
  wakes: WakeAdmission;
  scheduler: AgentScheduler;
  tenantId(): string;
}

/** Delegation as RPC sees it: this agent created as a child, its TTL, and — as a parent — its children's reports. */
export class Delegation {
  constructor(private readonly deps: DelegationDeps) {}

  /** Idempotent: the same spawn operation finds the child it created. Enqueues the delegated wake; arms the lineage TTL. */
  async createChild(tenantId: string, agentId: string, body: CreateAgentBody, lineage: AgentLineage, wake: ChildWake): Promise<Result<{ agent: Agent }>> {
    const { profile } = this.deps;
    const existing = profile.get();
    if (existing && existing.config.lineage?.spawnOperationId !== lineage.spawnOperationId) return failure("conflict", `agent ${agentId} already exists`);
    if (!existing) {
      const created = profile.create(tenantId, agentId, body, lineage);
      if (!created.ok) return created;
      if (lineage.expiresAt) await this.deps.scheduler.schedule(new Date(lineage.expiresAt), "expireLineage");
    }
    const agent = profile.get()!;
    await this.deps.lifecycle.syncDirectory(tenantId, agent);
    const woke = await this.deps.wakes.enqueue({ tenantId, agentId, ...wake });
    return woke.ok ? { ok: true, agent } : woke;
  }

  /** A child's report of its delegated run; the answer is a `child` wake of this agent. */
  async receiveReport(report: ChildReport): Promise<Result<{ runKey: string }>> {
    const agent = this.deps.profile.get();
    if (!agent) return failure("not_found", "agent not found");
    const received = this.deps.spawner.receiveReport(agent, report, (runKey) => this.deps.inbox.getRun(runKey)?.threadId ?? null);
    if (!received.ok) return received;
    const woke = await this.deps.wakes.enqueue({ tenantId: this.deps.tenantId(), agentId: agent.id, ...received.wake });
    return woke.ok ? { ok: true, runKey: received.wake.runKey } : woke;
  }

  /** A child past its TTL is destroyed (its delegated run, if unfinished, reports as skipped). */
  async expireLineage(): Promise<void> {
    const agent = this.deps.profile.get();
    const expiresAt = agent?.config.lineage?.expiresAt;
    if (!agent || agent.lifecycle === "destroyed" || !expiresAt || Date.parse(expiresAt) > Date.now()) return;
    await this.deps.lifecycle.apply("destroy");
    await this.deps.childReports.flush();
  }
}
