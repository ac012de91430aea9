import type { WakeReason } from "../../../core/ids/run-keys";
import type { RiskLevel } from "../../../core/tools/tool-envelopes";
import { httpModelName, type ToolListing } from "../../../schema/admin/tools";
import type { Capability, SideEffects } from "../../../tools/registry/types";


/** The gate's view of a tenant tool: same checks as a builtin one (capability, risk, wake reason). */
export interface HttpToolGate {
  name: string;
  version: number;
  description: string;
  riskLevel: RiskLevel;
  capabilitiesRequired: readonly Capability[];
  allowedWakeReasons: readonly WakeReason[];
  sideEffects: SideEffects;
  inputSchema: Record<string, unknown>;
}

export function httpToolGate(listing: ToolListing): HttpToolGate {
  return {
    // MCP tools keep their name: `mcp_<server>_<tool>` is already a valid function name.
    name: listing.kind === "mcp" ? listing.name : httpModelName(listing.name),
    version: listing.version,
    description: listing.description,
    riskLevel: listing.riskLevel,
    capabilitiesRequired: listing.capabilitiesRequired as Capability[],
    allowedWakeReasons: listing.allowedWakeReasons as WakeReason[],
    sideEffects: listing.sideEffects as SideEffects,
    inputSchema: listing.inputSchema as Record<string, unknown>,
  };
}

/** The tenant's registered HTTP tools and MCP servers' tools, as the gate and the model see them. */
export async function tenantHttpTools(tenant: { listTools(): Promise<ToolListing[]> }): Promise<HttpToolGate[]> {
  const listings = await tenant.listTools();
  return listings.filter((listing) => listing.kind === "http" || listing.kind === "mcp").map(httpToolGate);
}
