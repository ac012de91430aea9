import { TenantChannelsRpc } from "./rpc/channels";

export type { AuditEntry } from "./governance/audit-log";
export type { AuthOutcome } from "./access/client-auth";

/**
 * One tenant: its keys, agent directory, journal, alertness, governance, decisions and channels.
 * The RPC surface is layered by area, each layer extending the one before it:
 * TenantCore (parts, audit, alarm) → TenantAccessRpc → TenantJournalRpc → TenantAlertnessRpc →
 * TenantGovernanceRpc → TenantDecisionsRpc → TenantChannelsRpc → TenantDO (src/objects/tenant/rpc/).
 * The parts themselves are wired in src/objects/tenant/parts.ts.
 */
export class TenantDO extends TenantChannelsRpc {}
