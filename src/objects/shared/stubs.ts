import type { Env } from "../../env";
import type { Remote } from "./remote";
import type { AgentDO } from "../agent/agent-do";
import type { TenantDO } from "../tenant/tenant-do";

export const tenantStub = (env: Env, tenantId: string): Remote<TenantDO> =>
  env.TENANT.get(env.TENANT.idFromName(tenantId)) as unknown as Remote<TenantDO>;

/** Agent DO names are always derived from the authenticated tenant: no request can name another tenant's agent. */
export const agentStub = (env: Env, tenantId: string, agentId: string): Remote<AgentDO> =>
  env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`)) as unknown as Remote<AgentDO>;
