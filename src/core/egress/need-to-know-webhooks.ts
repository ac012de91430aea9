/**
 * NEED_TO_KNOW for the `outbound_webhook` boundary: a delivery body is built from an
 * allowlist projection of the tenant event (fields not on the list are dropped), and a final guard
 * re-reads the serialized bytes and checks `fields(payload) ⊆ allowlist(boundary, operation,
 * policyVersion)` before anything leaves. A violation blocks the delivery (`overshared_payload_blocked`).
 *
 * Paths are leaf paths: `a.b` for object keys, `a[]` for array elements (`a[].id` for their keys).
 * The envelope (`id`, `type`, `createdAt`, `eventSeq`, `agentId`, `runKey`) is on every list.
 */
export const WEBHOOK_BOUNDARY = "outbound_webhook";
/** Bumped whenever a list below changes, so a blocked-delivery record says which lists applied. */
export const WEBHOOK_ALLOWLIST_VERSION = "webhooks-2026-11-v1";

const ENVELOPE = ["id", "type", "createdAt", "eventSeq", "agentId", "runKey"] as const;
const MESSAGE_META = ["data.message.id", "data.message.threadId", "data.message.kind", "data.message.createdAt"];

/**
 * Per operation (event type, or `type:variant`), the `data` fields a receiver needs to act.
 * Deliberately absent: run traces, tool arguments and results, free-text answers, slot values,
 * agent configuration, and the text of any message other than what the agent says to people.
 */
const DATA_ALLOWLIST: Record<string, readonly string[]> = {
  "run.started": ["data.runKey", "data.reason", "data.threadId", "data.attempt"],
  "run.waiting": ["data.runKey", "data.step"],
  "run.interrupted": ["data.runKey", "data.interruptedBy", "data.step"],
  "run.completed": ["data.runKey", "data.status", "data.errorCode"],
  "run.failed": ["data.runKey", "data.status", "data.errorCode"],
  "message.appended": MESSAGE_META,
  "message.appended:assistant": [...MESSAGE_META, "data.message.text"],
  "tool.called": ["data.operationId", "data.toolName", "data.step"],
  "tool.result": ["data.operationId", "data.toolName", "data.ok", "data.code"],
  // ask_user: the question and its options; tool_approval: which tool, never its arguments.
  "decision.requested": ["data.decisionId", "data.kind", "data.question", "data.options[].id", "data.options[].label", "data.options[].description", "data.operationId", "data.toolName", "data.riskLevel"],
  "decision.resolved": ["data.decisionId", "data.kind", "data.resolutionType", "data.chosenOptionId", "data.operationId", "data.toolName", "data.resolvedBy"],
  "lifecycle.changed": ["data.from", "data.to"],
  "state.changed": ["data.state.revision"],
  "report.published": ["data.scope", "data.reportId", "data.action"],
  // Interactive sessions: which session, and why it closed.
  "session.closed": ["data.sessionId", "data.threadId", "data.reason"],
  "session.reopened": ["data.sessionId", "data.threadId"],
  // Brakes: what is held and how it ends; the operator's free-text reason stays in the audit log.
  "brake.engaged": ["data.brakeId", "data.scope", "data.target", "data.behaviour", "data.release", "data.decisionId"],
  "brake.released": ["data.brakeId", "data.how", "data.scope", "data.target", "data.behaviour"],
};

/** Event types an endpoint can subscribe to (also the only types ever delivered). */
export const WEBHOOK_EVENT_TYPES: readonly string[] = Object.keys(DATA_ALLOWLIST).filter((key) => !key.includes(":"));

export interface WebhookEventInput {
  deliveryId: string;
  type: string;
  createdAt: string;
  eventSeq: number;
  agentId: string | null;
  runKey: string | null;
  data: Record<string, unknown>;
}

/** The allowlist an event is checked against: its type, refined by a variant where one exists. */
export function webhookOperation(event: Pick<WebhookEventInput, "type" | "data">): string {
  if (event.type === "message.appended") {
    const message = event.data.message as { kind?: unknown } | undefined;
    if (message?.kind === "assistant") return "message.appended:assistant";
  }
  return event.type;
}

export function webhookAllowlist(operation: string, policyVersion: string = WEBHOOK_ALLOWLIST_VERSION): ReadonlySet<string> | null {
  if (policyVersion !== WEBHOOK_ALLOWLIST_VERSION) return null;
  const data = DATA_ALLOWLIST[operation];
  return data ? new Set([...ENVELOPE, ...data]) : null;
}

export type WebhookPayload =
  | { ok: true; operation: string; body: string }
  | { ok: false; code: "overshared_payload_blocked"; operation: string; policyVersion: string; violations: string[] };

/** Projects the event, serializes it, and guards the bytes. The body is exactly what will be sent. */
export function buildWebhookPayload(event: WebhookEventInput): WebhookPayload {
  const operation = webhookOperation(event);
  const allowlist = webhookAllowlist(operation);
  if (!allowlist) return blocked(operation, [`no allowlist for operation ${operation}`]);
  const source = { id: event.deliveryId, type: event.type, createdAt: event.createdAt, eventSeq: event.eventSeq, agentId: event.agentId, runKey: event.runKey, data: event.data };
  const body = JSON.stringify(pickPaths(source, [...allowlist]));
  const guard = guardWebhookBytes(body, operation);
  return guard.ok ? { ok: true, operation, body } : guard;
}

/** The final guard: reads the bytes back and compares every leaf field with the allowlist. */
export function guardWebhookBytes(body: string, operation: string, policyVersion: string = WEBHOOK_ALLOWLIST_VERSION): WebhookPayload {
  const allowlist = webhookAllowlist(operation, policyVersion);
  if (!allowlist) return blocked(operation, [`no allowlist for operation ${operation}`]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return blocked(operation, ["the body is not JSON"]);
  }
  if (!isRecord(parsed)) return blocked(operation, ["the body is not a JSON object"]);
  const violations = leafPaths(parsed).filter((path) => !allowlist.has(path));
  return violations.length === 0 ? { ok: true, operation, body } : blocked(operation, [...new Set(violations)].sort());
}

/** Every leaf field path of a JSON value (`a.b`, `a[]`, `a[].c`). Empty objects and arrays carry nothing, so they add no path. */
export function leafPaths(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => leafPaths(item, `${prefix}[]`));
  if (isRecord(value)) return Object.keys(value).flatMap((key) => leafPaths(value[key], prefix === "" ? key : `${prefix}.${key}`));
  return [prefix];
}

/** Copies only the listed leaf paths; a value found at a listed path is copied as is (the guard judges its shape). */
export function pickPaths(source: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of paths) pickInto(source, out, path.split("."));
  return out;
}

function pickInto(source: Record<string, unknown>, target: Record<string, unknown>, segments: string[]): void {
  const [head, ...rest] = segments;
  if (head === undefined) return;
  const isArray = head.endsWith("[]");
  const key = isArray ? head.slice(0, -2) : head;
  if (!Object.hasOwn(source, key)) return;
  const value = source[key];
  if (value === undefined) return;
  if (isArray) {
    if (!Array.isArray(value)) return;
    if (rest.length === 0) {
      target[key] = value;
      return;
    }
    const existing = Array.isArray(target[key]) ? (target[key] as Array<Record<string, unknown>>) : value.map(() => ({}));
    value.forEach((item, index) => {
      if (isRecord(item)) pickInto(item, existing[index]!, rest);
    });
    target[key] = existing;
    return;
  }
  if (rest.length === 0) {
    target[key] = value;
    return;
  }
  if (!isRecord(value)) return;
  const child = isRecord(target[key]) ? (target[key] as Record<string, unknown>) : {};
  pickInto(value, child, rest);
  if (Object.keys(child).length > 0) target[key] = child;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const blocked = (operation: string, violations: string[]): WebhookPayload => ({
  ok: false,
  code: "overshared_payload_blocked",
  operation,
  policyVersion: WEBHOOK_ALLOWLIST_VERSION,
  violations,
});
