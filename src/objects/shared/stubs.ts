import type { Agent } from "agents";
import type { Env } from "../../env";
import type { Remote } from "./remote";
import { meteredStub } from "./call-meter";
import type { AgentDO } from "../agent/agent-do";
import type { AgentCallback } from "../agent/lifecycle";
import type { TenantDO } from "../tenant/tenant-do";

/**
 * What callers may invoke on an agent: our RPC methods only. The Agents SDK's public surface
 * (schedule, setState, runWorkflow, addMcpServer, …) and the schedule callbacks the SDK calls by
 * name stay out of reach, so no route or queue can bypass the agent's own rules through them.
 */
export type AgentRpc = Remote<Omit<AgentDO, keyof Agent<Env> | AgentCallback>>;

/** Every call through these stubs is counted per tenant (./call-meter.ts, `vigil_do_calls_total`). */
export const tenantStub = (env: Env, tenantId: string): Remote<TenantDO> =>
  meteredStub(env.TENANT.get(env.TENANT.idFromName(tenantId)), tenantId, "tenant") as unknown as Remote<TenantDO>;

/** Agent DO names are always derived from the authenticated tenant: no request can name another tenant's agent. */
export const agentStub = (env: Env, tenantId: string, agentId: string): AgentRpc =>
  meteredStub(env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`)), tenantId, "agent") as unknown as AgentRpc;
