/**
 * A finished run as an OpenTelemetry trace: run span → step spans → model call
 * spans (GenAI semantic conventions) → tool call spans → saga phase spans. Built after the run ended
 * from what the agent persisted while it ran (trace rows, planned actions), so a run parked on a saga
 * or cut by an eviction still yields its whole tree, and nothing is added to the run's own path. Ids
 * are derived from the runKey: exporting the same run twice yields the same spans.
 * Pure: the agent gathers the rows, src/core/egress/otlp-json.ts encodes the result.
 */
import { H } from "../ids/hash";

export type SpanKind = "run" | "step" | "model_call" | "tool_call" | "saga_phase";
export type AttributeValue = string | number | boolean;

export interface TraceSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  /** OTLP SpanKind: model calls leave the process (CLIENT); the rest is INTERNAL. */
  client: boolean;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  /** `error` with a stable code (never free text: it could carry content). */
  status: { code: "unset" | "ok" | "error"; message?: string };
}

export interface RunTraceSource {
  agent: { id: string; kind: string; modelId: string };
  run: { runKey: string; reason: string; threadId: string; status: string; errorCode: string | null; enqueuedAt: string; startedAt: string | null; endedAt: string | null };
  /** The run's trace rows in order (kinds attempt, usage, saga, policy). */
  rows: ReadonlyArray<{ kind: string; data: Record<string, unknown>; createdAt: string }>;
  actions: ReadonlyArray<{
    operationId: string;
    step: number;
    callIndex: number;
    toolCallId: string;
    toolName: string;
    riskLevel: string;
    status: string;
    args: unknown;
    result: Record<string, unknown> | null;
    createdAt: string;
    updatedAt: string;
  }>;
  /** Message texts, present only when the tenant opted in to bodies. */
  bodies?: { input: string | null; replies: ReadonlyMap<number, string> };
}

export interface BuiltTrace {
  traceId: string;
  spans: TraceSpan[];
  /** Spans left out by the per-run limit. */
  dropped: number;
}

/** Well-known `gen_ai.provider.name` values for Vigil's provider kinds (others keep the endpoint id). */
const PROVIDER_NAMES: Record<string, string> = { openai: "openai", anthropic: "anthropic", "workers-ai": "cloudflare.workers_ai", builtin: "vigil.builtin" };

export function traceIdOf(runKey: string): string {
  return H("otel", "trace", runKey).slice(0, 32);
}

export function spanIdOf(runKey: string, ...parts: Array<string | number>): string {
  return H("otel", "span", runKey, ...parts).slice(0, 16);
}

export function buildRunTrace(source: RunTraceSource, limits: { maxSpans: number; maxBodyChars: number }): BuiltTrace {
  const { run, agent } = source;
  const runKey = run.runKey;
  const runId = spanIdOf(runKey, "run");
  const stepId = (step: number) => spanIdOf(runKey, "step", step);
  const clip = (text: string) => (text.length > limits.maxBodyChars ? text.slice(0, limits.maxBodyChars) : text);
  const children: TraceSpan[] = [];
  const steps = new Set<number>();

  // ── Model calls: one span per attempt, usage on the attempt that answered ──
  const modelSpans: TraceSpan[] = [];
  const awaitingUsage: TraceSpan[] = [];
  source.rows.forEach((row, index) => {
    const step = typeof row.data.step === "number" ? row.data.step : null;
    if (step === null) return;
    if (row.kind === "attempt") {
      const end = Date.parse(row.createdAt);
      const provider = String(row.data.provider ?? "unknown");
      const model = String(row.data.model ?? "unknown");
      const outcome = String(row.data.outcome ?? "");
      const providerName = PROVIDER_NAMES[provider] ?? provider;
      const span: TraceSpan = {
        spanId: spanIdOf(runKey, "model", index),
        parentSpanId: stepId(step),
        name: `chat ${model}`,
        kind: "model_call",
        client: true,
        startMs: end - Number(row.data.durationMs ?? 0),
        endMs: end,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": providerName,
          // The pre-1.37 name of the same attribute; most backends still read it.
          "gen_ai.system": providerName,
          "gen_ai.request.model": model,
          "vigil.step": step,
          "vigil.attempt": Number(row.data.attempt ?? 1),
          "vigil.attempt.outcome": outcome,
          ...(typeof row.data.status === "number" && { "http.response.status_code": row.data.status }),
          ...(outcome !== "succeeded" && { "error.type": String(row.data.errorCode ?? outcome) }),
        },
        status: outcome === "succeeded" ? { code: "ok" } : { code: "error", message: String(row.data.errorCode ?? outcome) },
      };
      if (outcome === "succeeded") awaitingUsage.push(span);
      modelSpans.push(span);
      steps.add(step);
    } else if (row.kind === "usage") {
      const span = awaitingUsage.shift();
      if (span) {
        span.attributes["gen_ai.usage.input_tokens"] = Number(row.data.inputTokens ?? 0);
        span.attributes["gen_ai.usage.output_tokens"] = Number(row.data.outputTokens ?? 0);
      }
    }
  });
  if (source.bodies) {
    const answered = new Map<number, TraceSpan>();
    for (const span of modelSpans) if (span.status.code === "ok") answered.set(span.attributes["vigil.step"] as number, span);
    const first = answered.get(0);
    if (first && source.bodies.input !== null) first.attributes["gen_ai.input.messages"] = clip(JSON.stringify([{ role: "user", parts: [{ type: "text", content: source.bodies.input }] }]));
    for (const [step, span] of answered) {
      const reply = source.bodies.replies.get(step);
      if (reply !== undefined) span.attributes["gen_ai.output.messages"] = clip(JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: reply }] }]));
    }
  }
  children.push(...modelSpans);

  // ── Tool calls and their saga phases ──
  const sagaRows = new Map<string, Array<{ data: Record<string, unknown>; at: number }>>();
  for (const row of source.rows) {
    if (row.kind !== "saga" || typeof row.data.operationId !== "string") continue;
    const list = sagaRows.get(row.data.operationId) ?? [];
    list.push({ data: row.data, at: Date.parse(row.createdAt) });
    sagaRows.set(row.data.operationId, list);
  }
  for (const action of [...source.actions].sort((a, b) => a.step - b.step || a.callIndex - b.callIndex)) {
    steps.add(action.step);
    const toolId = spanIdOf(runKey, "tool", action.operationId);
    const start = Date.parse(action.createdAt);
    const settled = action.status === "completed" || action.status === "failed";
    const end = settled ? Date.parse(action.updatedAt) : start;
    const failureCode = action.result && action.result.ok === false ? String(action.result.code ?? "failed") : null;
    const tool: TraceSpan = {
      spanId: toolId,
      parentSpanId: stepId(action.step),
      name: `execute_tool ${action.toolName}`,
      kind: "tool_call",
      client: false,
      startMs: start,
      endMs: Math.max(start, end),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": action.toolName,
        "gen_ai.tool.call.id": action.toolCallId,
        "vigil.operation_id": action.operationId,
        "vigil.step": action.step,
        "vigil.tool.risk_level": action.riskLevel,
        "vigil.tool.status": action.status,
        ...(failureCode !== null && { "error.type": failureCode }),
      },
      status: failureCode !== null ? { code: "error", message: failureCode } : settled ? { code: "ok" } : { code: "unset" },
    };
    if (source.bodies) {
      tool.attributes["gen_ai.tool.call.arguments"] = clip(JSON.stringify(action.args ?? {}));
      if (action.result) tool.attributes["gen_ai.tool.call.result"] = clip(JSON.stringify(action.result));
    }
    const phases = sagaPhases(runKey, action.operationId, toolId, sagaRows.get(action.operationId) ?? [], failureCode);
    // The call ends when its last phase does (phase 2's record lands just after the call's row settles).
    tool.endMs = Math.max(tool.endMs, ...phases.map((span) => span.endMs));
    children.push(tool, ...phases);
  }

  // ── Steps and the run ──
  const stepSpans: TraceSpan[] = [...steps].sort((a, b) => a - b).map((step) => {
    const within = children.filter((span) => span.parentSpanId === stepId(step) || (span.kind === "saga_phase" && children.some((tool) => tool.spanId === span.parentSpanId && tool.parentSpanId === stepId(step))));
    return {
      spanId: stepId(step),
      parentSpanId: runId,
      name: `step ${step}`,
      kind: "step",
      client: false,
      startMs: Math.min(...within.map((span) => span.startMs)),
      endMs: Math.max(...within.map((span) => span.endMs)),
      attributes: { "vigil.step": step },
      status: { code: "unset" },
    };
  });
  let inputTokens = 0;
  let outputTokens = 0;
  for (const span of modelSpans) {
    inputTokens += Number(span.attributes["gen_ai.usage.input_tokens"] ?? 0);
    outputTokens += Number(span.attributes["gen_ai.usage.output_tokens"] ?? 0);
  }
  const runStart = Date.parse(run.startedAt ?? run.enqueuedAt);
  const everything = [...stepSpans, ...children];
  const runSpan: TraceSpan = {
    spanId: runId,
    parentSpanId: null,
    name: `invoke_agent ${agent.kind}`,
    kind: "run",
    client: false,
    startMs: Math.min(runStart, ...everything.map((span) => span.startMs)),
    endMs: Math.max(run.endedAt ? Date.parse(run.endedAt) : runStart, ...everything.map((span) => span.endMs)),
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.id": agent.id,
      "gen_ai.agent.name": agent.kind,
      "gen_ai.conversation.id": run.threadId,
      "gen_ai.request.model": agent.modelId,
      "gen_ai.usage.input_tokens": inputTokens,
      "gen_ai.usage.output_tokens": outputTokens,
      "vigil.wake_reason": run.reason,
      "vigil.run.status": run.status,
      ...(run.errorCode !== null && { "vigil.run.error_code": run.errorCode }),
    },
    status: run.status === "failed_terminal" ? { code: "error", message: run.errorCode ?? "failed_terminal" } : { code: "ok" },
  };
  // Every span carries the run's key (the tool and saga spans their operationId too): a backend joins them to Vigil's records.
  const all = [runSpan, ...everything].map((span) => ({ ...span, attributes: { "vigil.span.kind": span.kind, "vigil.run_key": runKey, ...span.attributes } }));
  const kept = all.slice(0, Math.max(1, limits.maxSpans));
  return { traceId: traceIdOf(runKey), spans: kept, dropped: all.length - kept.length };
}

/** The saga's phases as the agent saw them: the wait for a decision, phase 1 (apply), phase 2 (record). */
function sagaPhases(runKey: string, operationId: string, toolId: string, rows: ReadonlyArray<{ data: Record<string, unknown>; at: number }>, failureCode: string | null): TraceSpan[] {
  const started = rows.find((row) => row.data.phase === "started");
  if (!started) return [];
  const resolved = rows.find((row) => row.data.phase === "approval_resolved");
  const recorded = rows.find((row) => row.data.phase === "recorded");
  const phase = (name: "approval" | "phase1" | "phase2", startMs: number, endMs: number, extra: Record<string, AttributeValue> = {}, error: string | null = null): TraceSpan => ({
    spanId: spanIdOf(runKey, "saga", operationId, name),
    parentSpanId: toolId,
    name: `saga ${name}`,
    kind: "saga_phase",
    client: false,
    startMs,
    endMs: Math.max(startMs, endMs),
    attributes: { "vigil.operation_id": operationId, "vigil.saga.phase": name, ...extra, ...(error !== null && { "error.type": error }) },
    status: error !== null ? { code: "error", message: error } : { code: "ok" },
  });
  const spans: TraceSpan[] = [];
  const recordedEnd = recorded?.at ?? null;
  const recordStart = recorded ? recorded.at - Number(recorded.data.durationMs ?? 0) : null;
  let applyFrom = started.at;
  if (started.data.approval === true) {
    const until = resolved?.at ?? recordStart ?? started.at;
    spans.push(phase("approval", started.at, until, resolved ? { "vigil.approval.resolution": String(resolved.data.outcome ?? "") } : {}));
    applyFrom = until;
    // A refused or cancelled decision never reaches phase 1: its refusal is recorded directly.
    if (failureCode === "rejected" || failureCode === "cancelled") {
      if (recordStart !== null && recordedEnd !== null) spans.push(phase("phase2", recordStart, recordedEnd));
      return spans;
    }
  }
  if (recordStart !== null && recordedEnd !== null) {
    spans.push(phase("phase1", applyFrom, recordStart, {}, failureCode));
    spans.push(phase("phase2", recordStart, recordedEnd));
  }
  return spans;
}
