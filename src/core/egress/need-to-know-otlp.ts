/**
 * NEED_TO_KNOW for the `otlp_export` boundary: a trace export is built from named
 * attributes only, and a final guard re-reads the serialized bytes and checks that every field of
 * the document, and every attribute key of every span (by its `vigil.span.kind`), is on the
 * allowlist for `(boundary, span kind, includeBodies, version)` before anything leaves. Message
 * texts, tool arguments and results are on the list only when the tenant opted in (`includeBodies`).
 * A violation blocks the export (`overshared_payload_blocked`). Pure.
 */
import { leafPaths } from "./need-to-know-webhooks";

export const OTLP_BOUNDARY = "otlp_export";
/** Bumped whenever a list below changes. */
export const OTLP_ALLOWLIST_VERSION = "otlp-2026-11-v1";

/** The document's structure (OTLP JSON), as leaf paths. */
const DOCUMENT: ReadonlySet<string> = new Set([
  "resourceSpans[].resource.attributes[].key",
  "resourceSpans[].resource.attributes[].value.stringValue",
  "resourceSpans[].scopeSpans[].scope.name",
  "resourceSpans[].scopeSpans[].scope.version",
  ...["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "status.code", "status.message", "attributes[].key", "attributes[].value.stringValue", "attributes[].value.intValue", "attributes[].value.doubleValue", "attributes[].value.boolValue"].map(
    (field) => `resourceSpans[].scopeSpans[].spans[].${field}`,
  ),
]);

const RESOURCE: ReadonlySet<string> = new Set(["service.name", "vigil.tenant_id", "vigil.agent.id"]);
const COMMON = ["vigil.span.kind", "vigil.run_key"];
const USAGE = ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"];

/** Per span kind, the attribute keys a collector needs to draw the run; `bodies` are added only on opt-in. */
const SPAN_ATTRIBUTES: Record<string, { always: readonly string[]; bodies: readonly string[] }> = {
  run: {
    always: [...COMMON, "gen_ai.operation.name", "gen_ai.agent.id", "gen_ai.agent.name", "gen_ai.conversation.id", "gen_ai.request.model", ...USAGE, "vigil.wake_reason", "vigil.run.status", "vigil.run.error_code"],
    bodies: [],
  },
  step: { always: [...COMMON, "vigil.step"], bodies: [] },
  model_call: {
    always: [...COMMON, "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "gen_ai.request.model", ...USAGE, "vigil.step", "vigil.attempt", "vigil.attempt.outcome", "http.response.status_code", "error.type"],
    bodies: ["gen_ai.input.messages", "gen_ai.output.messages"],
  },
  tool_call: {
    always: [...COMMON, "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "vigil.operation_id", "vigil.step", "vigil.tool.risk_level", "vigil.tool.status", "error.type"],
    bodies: ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"],
  },
  saga_phase: { always: [...COMMON, "vigil.operation_id", "vigil.saga.phase", "vigil.approval.resolution", "error.type"], bodies: [] },
};

export function otlpAttributeAllowlist(spanKind: string, includeBodies: boolean, version: string = OTLP_ALLOWLIST_VERSION): ReadonlySet<string> | null {
  const entry = version === OTLP_ALLOWLIST_VERSION ? SPAN_ATTRIBUTES[spanKind] : undefined;
  return entry ? new Set([...entry.always, ...(includeBodies ? entry.bodies : [])]) : null;
}

export type OtlpGuard = { ok: true } | { ok: false; code: "overshared_payload_blocked"; policyVersion: string; violations: string[] };

interface Attribute {
  key?: unknown;
  value?: Record<string, unknown>;
}

/** The final guard: reads the bytes back and checks the document's fields and every attribute key. */
export function guardOtlpBytes(body: string, includeBodies: boolean): OtlpGuard {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return blocked(["the body is not JSON"]);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return blocked(["the body is not a JSON object"]);
  const violations = leafPaths(parsed).filter((path) => !DOCUMENT.has(path));
  const document = parsed as { resourceSpans?: Array<{ resource?: { attributes?: Attribute[] }; scopeSpans?: Array<{ spans?: Array<{ attributes?: Attribute[] }> }> }> };
  for (const resourceSpans of document.resourceSpans ?? []) {
    for (const attribute of resourceSpans.resource?.attributes ?? []) {
      if (!RESOURCE.has(String(attribute.key))) violations.push(`resource:${String(attribute.key)}`);
    }
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        const attributes = span.attributes ?? [];
        const kind = attributes.find((attribute) => attribute.key === "vigil.span.kind")?.value?.stringValue;
        const allowed = otlpAttributeAllowlist(String(kind), includeBodies);
        if (!allowed) {
          violations.push(`span kind ${String(kind)}`);
          continue;
        }
        for (const attribute of attributes) if (!allowed.has(String(attribute.key))) violations.push(`${String(kind)}:${String(attribute.key)}`);
      }
    }
  }
  return violations.length === 0 ? { ok: true } : blocked([...new Set(violations)].sort());
}

const blocked = (violations: string[]): OtlpGuard => ({ ok: false, code: "overshared_payload_blocked", policyVersion: OTLP_ALLOWLIST_VERSION, violations });
