// Tools: planned actions, the tool runner and approval gate, tenant HTTP tools and tool sagas.
// The feature's public face: code outside this folder imports the feature only through this file.
export { ActionStore, type PlannedAction } from "./actions";
export { ApprovalGate } from "./approval-gate";
export { type HttpToolGate, tenantHttpTools } from "./http-tools";
export { type ToolCallRequest, ToolRunner } from "./runner";
export { Sagas } from "./sagas";
