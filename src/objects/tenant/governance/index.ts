// Governance: policies, consents, provider secrets, inference grants, brakes, run policy, the audit log.
// The feature's public face: code outside this folder imports the feature only through this file.
export { auditPage, type AuditEntry, findAudit, writeAudit } from "./audit-log";
export { BRAKE_DECISION_KIND, type BrakeDecisionRequest, TenantBrakes } from "./brakes";
export { Governance } from "./governance";
export type { InferenceGrantRequest } from "./inference-grant";
export { runGovernanceFor } from "./run-policy";
export { AgentSnapshots, type SnapshotAudience } from "./agent-snapshots";
export { SnapshotChanges } from "./snapshot-changes";
