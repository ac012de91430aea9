import type { Result } from "../../http/error-codes";
import type { Agent, AgentLineage, CreateAgentBody } from "../../schema/agents";
import { AgentRunsRpc } from "./agent-runs-rpc";
import type { ChildReport, ChildWake } from "./delegation/spawn";

/** AgentDO's delegation RPC (SPEC §3): created as a spawned child, its lineage TTL, and children's reports to their parent. */
export abstract class AgentDelegationRpc extends AgentRunsRpc {
  /** Creates this agent as a spawned child (idempotent per spawn operation) and enqueues its delegated wake; arms the lineage TTL. */
  async createChildAgent(tenantId: string, agentId: string, body: CreateAgentBody, lineage: AgentLineage, wake: ChildWake): Promise<Result<{ agent: Agent }>> {
    return this.parts.delegation.createChild(tenantId, agentId, body, lineage, wake);
  }

  /** One of this agent's children reports its delegated run; the answer is a `child` wake. */
  async receiveChildReport(report: ChildReport): Promise<Result<{ runKey: string }>> {
    return this.parts.delegation.receiveReport(report);
  }

  /** Agents SDK schedule callback: a child past its TTL is destroyed (its delegated run, if unfinished, reports as skipped). */
  async expireLineage(): Promise<void> {
    await this.parts.delegation.expireLineage();
  }
}
