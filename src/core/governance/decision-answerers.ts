/**
 * Who may answer a decision (seed 004: channel input never inherits operator authority). An operator (API key)
 * answers any decision of the tenant. A visitor (widget or tenant-IdP token) answers only a decision raised in one of
 * their own sessions: an `ask_user` question, or the approval of a tool the tenant's policy lists in
 * `visitorApprovableTools` — approve or reject it, never rewrite its arguments nor grant a standing approval.
 */
export type AnswererKind = "operator" | "visitor";

export interface AnswerQuestion {
  answerer: AnswererKind;
  decisionType: string;
  /** The approval's tool (tool_approval decisions). */
  toolName?: string | undefined;
  /** The decision was raised in one of the visitor's own sessions. */
  inOwnSession: boolean;
  resolutionType: string;
  alwaysApprove: boolean;
  visitorApprovableTools: ReadonlyArray<string>;
}

export type AnswerRefusal = "not_visitor_approvable" | "visitor_cannot_modify" | "visitor_cannot_always_approve";

/** `allowed`; `absent` (looks like no such decision: not the visitor's); or `refused` with the rule that refused it. */
export type AnswerVerdict = { kind: "allowed" } | { kind: "absent" } | { kind: "refused"; reason: AnswerRefusal; message: string };

export function mayAnswer(question: AnswerQuestion): AnswerVerdict {
  if (question.answerer === "operator") return { kind: "allowed" };
  if (!question.inOwnSession) return { kind: "absent" };
  if (question.decisionType === "decision/option") return { kind: "allowed" };
  if (question.decisionType !== "decision/tool_approval") return { kind: "absent" };
  const tool = question.toolName ?? "";
  if (!question.visitorApprovableTools.includes(tool)) {
    return { kind: "refused", reason: "not_visitor_approvable", message: `an operator must answer this approval: the tenant's policy does not list ${tool} in visitorApprovableTools` };
  }
  if (question.resolutionType === "modify") return { kind: "refused", reason: "visitor_cannot_modify", message: "a visitor approves or rejects a call as proposed; modifying its arguments needs an API key" };
  if (question.alwaysApprove) return { kind: "refused", reason: "visitor_cannot_always_approve", message: "alwaysApprove needs an API key; widget tokens approve one call at a time" };
  return { kind: "allowed" };
}
