import { asc, eq } from "drizzle-orm";
import { config } from "../../../config";
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { guardOtlpBytes, OTLP_ALLOWLIST_VERSION } from "../../../core/egress/need-to-know-otlp";
import { buildRunTrace, type RunTraceSource } from "../../../core/egress/otel-run-trace";
import { encodeOtlpTraces } from "../../../core/egress/otlp-json";
import type { Result } from "../../../core/runtime/result";
import * as schema from "../../../db/agent-schema";
import { sendThroughDoor, type EgressRecord } from "../../../egress";
import { logEvent } from "../../../log";
import type { Agent } from "../../../schema/agents/agents";
import type { TelemetryTarget } from "../../../schema/admin/policy";
import type { Run } from "../../../schema/agents/runs";
import type { History } from "../memory";
import type { AgentDb } from "../types";
import { runMessageIds } from "../wakes";
import type { RunTrace } from "./run-trace";

export interface RunTelemetryDeps {
  db: AgentDb;
  trace: RunTrace;
  history: History;
  agent(): Agent | null;
  tenantId(): string;
  mode: DeploymentMode;
  /**
   * The tenant's export target (TenantDO.telemetryTarget) and the version of the tenant snapshot it was read under;
   * asked again once the snapshot in force has another version, and at most once per `config.telemetry.targetTtlMs`.
   */
  target(): Promise<Result<{ target: TelemetryTarget | null }> & { snapshotVersion?: number }>;
  /** The version of the tenant snapshot this agent holds now (a push changes it). */
  snapshotVersion(): number;
  waitUntil(work: Promise<unknown>): void;
  sleep?: (ms: number) => Promise<void>;
}

/** Statuses an OTLP receiver answers when a retry may succeed (OTLP/HTTP spec: 429, 502, 503, 504). */
const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * OpenTelemetry export of finished runs (SPEC §12, issue 15). When a run reaches its terminal status
 * the agent reads what the run persisted, builds the trace (src/core/egress/otel-run-trace.ts), guards the
 * bytes (NEED_TO_KNOW, src/core/egress/need-to-know-otlp.ts) and sends one OTLP/HTTP request through the
 * egress door, all in the background: nothing here is awaited by the run, and a failing or slow
 * collector costs the run nothing. Attempts are bounded; the outcome (spans sent, dropped, status)
 * lands on the run's trace as a `policy` row with gate `otlp`.
 */
export class RunTelemetry {
  /** The answer for one snapshot version: a policy change (a new version pushed) makes it stale at once. */
  private cached: { value: TelemetryTarget | null; until: number; version: number } | null = null;
  private asking: Promise<Result<{ target: TelemetryTarget | null }> & { snapshotVersion?: number }> | null = null;

  constructor(private readonly deps: RunTelemetryDeps) {}

  /** Called once per terminal run; returns at once. */
  onRunEnded(run: Run): void {
    this.deps.waitUntil(this.export(run).catch((error: unknown) => logEvent("warn", "trace export failed", { runKey: run.runKey, error: String(error) })));
  }

  /** Forgets the cached target (tests, and a policy push once the agent holds a policy snapshot). */
  forgetTarget(): void {
    this.cached = null;
  }

  private async export(run: Run): Promise<void> {
    const target = await this.target(run.runKey);
    if (!target) return;
    const agent = this.deps.agent();
    if (!agent) return;
    const built = buildRunTrace(this.source(agent, run, target.includeBodies), { maxSpans: config.telemetry.maxSpansPerRun, maxBodyChars: config.telemetry.maxBodyChars });
    const body = encodeOtlpTraces(built, { tenantId: this.deps.tenantId(), agentId: agent.id });
    const detail = { spans: built.spans.length, droppedSpans: built.dropped, policyVersion: target.policyVersion, allowlistVersion: OTLP_ALLOWLIST_VERSION, includeBodies: target.includeBodies };
    const guard = guardOtlpBytes(body, target.includeBodies);
    if (!guard.ok) {
      this.deps.trace.policy(run.runKey, { gate: "otlp", outcome: "denied", code: guard.code, detail: { ...detail, violations: guard.violations.slice(0, 20) } });
      return;
    }
    const sent = await this.send(target, body);
    this.deps.trace.policy(run.runKey, {
      gate: "otlp",
      outcome: sent.ok ? "allowed" : "denied",
      code: sent.ok ? null : sent.code,
      subject: sent.host ?? undefined,
      detail: { ...detail, attempts: sent.attempts, status: sent.status },
    });
    if (!sent.ok) logEvent("warn", "trace export dropped", { runKey: run.runKey, code: sent.code, status: sent.status, spans: built.spans.length });
  }

  private async target(runKey: string): Promise<TelemetryTarget | null> {
    if (this.cached && this.cached.until > Date.now() && this.cached.version === this.deps.snapshotVersion()) return this.cached.value;
    // Runs that end together (a run and its coalesced companions) share one question to the tenant.
    this.asking ??= this.deps.target().finally(() => {
      this.asking = null;
    });
    const answer = await this.asking;
    if (!answer.ok) {
      // A revoked headers secret: nothing is sent without them; the run says why.
      this.deps.trace.policy(runKey, { gate: "otlp", outcome: "denied", code: answer.code });
      return null;
    }
    this.cached = { value: answer.target, until: Date.now() + config.telemetry.targetTtlMs, version: answer.snapshotVersion ?? this.deps.snapshotVersion() };
    return answer.target;
  }

  private source(agent: Agent, run: Run, includeBodies: boolean): RunTraceSource {
    const actions = this.deps.db.select().from(schema.actions).where(eq(schema.actions.runKey, run.runKey)).orderBy(asc(schema.actions.step), asc(schema.actions.callIndex)).all();
    const source: RunTraceSource = {
      agent: { id: agent.id, kind: agent.kind, modelId: agent.config.modelId },
      run: { runKey: run.runKey, reason: run.reason, threadId: run.threadId, status: run.status, errorCode: run.errorCode, enqueuedAt: run.enqueuedAt, startedAt: run.startedAt, endedAt: run.endedAt },
      rows: this.deps.trace.rows(run.runKey),
      actions: actions.map((row) => ({ ...row, args: row.args, result: row.result ?? null })),
    };
    if (!includeBodies) return source;
    const replies = new Map<number, string>();
    for (let step = 0; step < config.run.maxStepsPerRun; step++) {
      const reply = this.deps.history.get(runMessageIds.reply(run.runKey, step));
      if (reply?.text) replies.set(step, reply.text);
    }
    return { ...source, bodies: { input: this.deps.history.get(runMessageIds.input(run.runKey))?.text ?? null, replies } };
  }

  /** One request, retried on a retryable answer or a transport error, at most `maxAttempts` times. */
  private async send(target: TelemetryTarget, body: string): Promise<{ ok: true; attempts: number; status: number; host: string | null } | { ok: false; code: string; attempts: number; status: number | null; host: string | null }> {
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    let host: string | null = null;
    try {
      host = new URL(target.endpoint).host;
    } catch {
      return { ok: false, code: "network_denied", attempts: 0, status: null, host: null };
    }
    let status: number | null = null;
    let code = "otlp_export_failed";
    for (let attempt = 1; attempt <= config.telemetry.maxAttempts; attempt++) {
      let record: EgressRecord | null = null;
      let retryAfterMs: number | null = null;
      try {
        const outcome = await sendThroughDoor({
          url: target.endpoint,
          init: { method: "POST", headers: { ...target.headers, "content-type": "application/json" }, body, signal: AbortSignal.timeout(config.telemetry.timeoutMs) },
          purpose: "otlp",
          allowedHosts: [host],
          mode: this.deps.mode,
          record: (entry) => {
            record = entry;
          },
        });
        if (!outcome.ok) return { ok: false, code: outcome.code, attempts: attempt, status: null, host };
        status = outcome.response.status;
        retryAfterMs = retryAfter(outcome.response.headers.get("retry-after"));
        await outcome.response.body?.cancel().catch(() => undefined);
        if (status >= 200 && status < 300) return { ok: true, attempts: attempt, status, host };
        code = `otlp_status_${status}`;
        if (!RETRYABLE.has(status)) return { ok: false, code, attempts: attempt, status, host };
      } catch {
        code = (record as EgressRecord | null)?.reason === "TimeoutError" ? "otlp_timeout" : "otlp_unreachable";
      }
      if (attempt < config.telemetry.maxAttempts) await sleep(Math.min(retryAfterMs ?? config.telemetry.backoffMs * 2 ** (attempt - 1), 10_000));
    }
    return { ok: false, code, attempts: config.telemetry.maxAttempts, status, host };
  }
}

function retryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}
