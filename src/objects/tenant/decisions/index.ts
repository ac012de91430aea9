// Decisions: approvals, questions and brake decisions, their desk and resolution, trust.
// The feature's public face: code outside this folder imports the feature only through this file.
export { Approvals } from "./approvals";
export { type BrakeDecisionOutcome, BrakeDecisions } from "./brake-decisions";
export { type DecisionHoldFilter, type DecisionRecord, Decisions, type QuestionRequest, type ResolveBody, type ResolveOutcome } from "./decisions";
export { DecisionDesk, type DecisionListQuery } from "./desk";
export { DecisionResolution } from "./resolution";
export type { ApprovalAnswer, ApprovalRequest, ApprovalState } from "./tool-approvals";
