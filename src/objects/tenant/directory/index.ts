// Directory: the agent directory, lineage, agent activity, tenant erasure.
// The feature's public face: code outside this folder imports the feature only through this file.
export { AgentActivity } from "./agent-activity";
export { AgentDirectory } from "./directory";
export { OPERATOR_AUDIT_OBJECT, type TenantErasure } from "./erasure";
export { TenantErasures } from "./erasures";
export { delegationContextFor, recordSpawnDecision } from "./lineage";
