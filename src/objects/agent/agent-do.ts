import type { LifecycleCommand } from "../../core/lifecycle";
import { failure, type Result } from "../../http/error-codes";
import type { Agent, AgentState, CreateAgentBody, PatchAgentBody } from "../../schema/agents";
import { dumpTables, type TableDump } from "../shared/debug-dump";
import { AgentDelegationRpc } from "./agent-delegation-rpc";

export type { TurnInput } from "./wakes/admission";

/**
 * One agent: a thin shell over its parts (src/objects/agent/parts.ts) and its own SQLite, exposing
 * a small typed RPC surface in layers (agent-core → agent-memory-rpc → agent-runs-rpc →
 * agent-delegation-rpc → here: the profile, its lifecycle and the debug seams). The rules live in src/core.
 */
export class AgentDO extends AgentDelegationRpc {
  async createAgent(tenantId: string, agentId: string, body: CreateAgentBody): Promise<Result<{ agent: Agent }>> {
    return this.parts.lifecycle.create(tenantId, agentId, body);
  }

  getAgent(): Agent | null {
    return this.parts.profile.get();
  }

  async getState(): Promise<Result<{ state: AgentState }>> {
    const state = this.parts.profile.state();
    return state ? { ok: true, state } : failure("not_found", "agent not found");
  }

  async patchAgent(body: PatchAgentBody): Promise<Result<{ agent: Agent }>> {
    return this.parts.lifecycle.patch(body);
  }

  async applyLifecycle(command: LifecycleCommand): Promise<Result<{ agent: Agent }>> {
    return this.parts.lifecycle.apply(command);
  }

  /** Test seam; refused unless VIGIL_FAULTS=enabled. */
  armFault(point: string, times = 1): boolean {
    return this.parts.faults.arm(point, times);
  }

  /** Test seam (VIGIL_FAULTS=enabled only): every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    return this.seamDisabled() ?? { ok: true, tables: await dumpTables(this.ctx.storage) };
  }
}
