/**
 * OTLP/HTTP JSON encoding of a run trace (an `ExportTraceServiceRequest`, opentelemetry-proto
 * 1.x JSON mapping): trace and span ids as lowercase hex, enums as integers, 64-bit integers
 * (timestamps, int attributes) as decimal strings. Hand-written so the Worker bundle carries no SDK.
 */
import type { AttributeValue, BuiltTrace, TraceSpan } from "./otel-run-trace";

export const OTLP_SCOPE = { name: "vigil", version: "1" } as const;

type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

export interface OtlpResource {
  tenantId: string;
  agentId: string;
}

/** The request body for one run (one resource: the agent; one scope: vigil). */
export function encodeOtlpTraces(trace: BuiltTrace, resource: OtlpResource): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": "vigil", "vigil.tenant_id": resource.tenantId, "vigil.agent.id": resource.agentId }) },
        scopeSpans: [{ scope: { ...OTLP_SCOPE }, spans: trace.spans.map((span) => encodeSpan(trace.traceId, span)) }],
      },
    ],
  });
}

function encodeSpan(traceId: string, span: TraceSpan) {
  return {
    traceId,
    spanId: span.spanId,
    ...(span.parentSpanId !== null && { parentSpanId: span.parentSpanId }),
    name: span.name,
    // SPAN_KIND_INTERNAL = 1, SPAN_KIND_CLIENT = 3
    kind: span.client ? 3 : 1,
    startTimeUnixNano: nanos(span.startMs),
    endTimeUnixNano: nanos(span.endMs),
    attributes: attributes(span.attributes),
    // STATUS_CODE_UNSET = 0, OK = 1, ERROR = 2
    status: { code: span.status.code === "ok" ? 1 : span.status.code === "error" ? 2 : 0, ...(span.status.message !== undefined && { message: span.status.message }) },
  };
}

function attributes(values: Record<string, AttributeValue>): Array<{ key: string; value: OtlpValue }> {
  return Object.entries(values).map(([key, value]) => ({ key, value: encodeValue(value) }));
}

function encodeValue(value: AttributeValue): OtlpValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

function nanos(ms: number): string {
  return (BigInt(Math.max(0, Math.trunc(ms))) * 1_000_000n).toString();
}
