/**
 * The model gateway (SPEC §6): every model call, builtin or remote, goes through here. For each
 * candidate — the agent's model, then its configured fallbacks, the tenant's explicit choice — a
 * remote model must first pass the inference gate in spec order: scope (the context's categories
 * within the agent's) → the tenant's grant (provider/model allowed, privacy receipt, secret) →
 * NEED_TO_KNOW projection and the final guard on the bytes, inside the egress door that reaches
 * only the granted endpoint's host. A refusal sends nothing. Provider failures are retried per
 * src/core/runtime/provider-retry.ts; every attempt, gate decision and model call's usage lands on the run.
 */
import type { ModelMessage, ToolSet } from "ai";
import { deploymentMode } from "../core/egress/deployment-mode";
import { categoryIdsIn, outOfScopeCategories } from "../core/memory/context-categories";
import { costMicros } from "../core/governance/model-cost";
import { classifyProviderFailure, deterministicJitter, nextAttemptDecision, type ClassifiedFailure } from "../core/runtime/provider-retry";
import type { Result } from "../core/runtime/result";
import { seamOn } from "../core/runtime/seams";
import { builtinModel, type WakeContext } from "./resolve";
import { builtinReadsTools } from "./builtin-model";
import type { AttemptEntry, TraceSink, UsageEntry } from "../core/runtime/run-trace-entries";
import type { Agent } from "../schema/agents/agents";
import type { InferenceGrant } from "../schema/admin/policy";
import { callModel, type StepOutput } from "./call-model";
import { GatewayError, isGatewayError } from "./errors";
import { failureOf } from "./failures";
import { parseModelId } from "./model-id";
import { remoteModel } from "./providers";

export type { TraceSink };

/** The tenant's half of the gate (TenantDO.inferenceGrant). */
export interface GrantSource {
  inferenceGrant(request: { agentId: string; modelId: string; categoryIds: string[] }): Promise<Result<{ grant: InferenceGrant }>>;
}

/** The only deployment switches the gateway reads (test seams; see docs/decisions.md). */
export interface GatewayEnv {
  /** `local` under `npm start`: http to loopback/private endpoints allowed (src/core/egress/deployment-mode.ts). */
  VIGIL_MODE?: string | undefined;
  VIGIL_FAULTS?: string | undefined;
  VIGIL_FAULT_OVERSHARE?: string | undefined;
}

export interface InferenceContext {
  env: GatewayEnv;
  agent: Agent;
  /** What a builtin model reads about the wake. */
  wake: WakeContext;
  /** Why the call is made (`run_step`, `compaction`, …); recorded with usage. */
  purpose: string;
  /** Where attempts, gate decisions and usage are recorded (a run, or a job with its own key). */
  trace?: { runKey: string; sink: TraceSink };
  /** The tenant's half of the gate (in a Durable Object: the TenantDO stub). */
  grants: GrantSource;
  /** Default: a real timer (tests of the loop inject their own). */
  sleep?: (ms: number) => Promise<void>;
  /** Default: the runtime's fetch. */
  fetch?: typeof fetch;
  /** Strings the request's bytes must not carry (withheld extension slot values, NEED_TO_KNOW). */
  withheld?: ReadonlyArray<{ key: string; needle: string }>;
}

export interface InferenceInput {
  system: string | null;
  messages: ModelMessage[];
  /**
   * The tools offered, or a function that builds them: called at most once per call, and only when a candidate reads
   * tools (`builtin:echo` does not: ./builtin-model.ts). A run step's set is rebuilt per step (the registry schemas
   * copied, the tenant's HTTP tools read), and the SDK converts it again; for a model that reads none that was pure
   * cost on every turn (issue 12 §8, session 12).
   */
  tools?: ToolSet | (() => Promise<ToolSet>);
  onDelta?: (delta: string) => void;
}

export interface InferenceOutput extends StepOutput {
  /** The candidate that answered (`provider:model`). */
  modelId: string;
  costMicros: number;
}

interface Prepared {
  model: ReturnType<typeof remoteModel>["model"];
  provider: string;
  modelName: string;
  timeoutMs: number | null;
  pricing?: { inputUsdPerMTok: number; outputUsdPerMTok: number } | undefined;
  /** False for a model whose answers never depend on the tools offered: it is offered none. */
  readsTools: boolean;
}

const NO_TOOLS: ToolSet = {};

export async function infer(ctx: InferenceContext, input: InferenceInput): Promise<InferenceOutput> {
  const candidates = [...new Set([ctx.agent.config.modelId, ...(ctx.agent.config.fallbackModels ?? [])])];
  const runKey = ctx.trace?.runKey ?? "";
  const record = ctx.trace?.sink;
  const sleep = ctx.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const skipped: string[] = [];
  let lastFailure: ClassifiedFailure | null = null;
  let offered: Promise<ToolSet> | null = null;
  const toolsFor = (prepared: Prepared): Promise<ToolSet> | ToolSet => {
    if (!prepared.readsTools) return NO_TOOLS;
    const tools = input.tools;
    return (offered ??= typeof tools === "function" ? tools() : Promise.resolve(tools ?? NO_TOOLS));
  };

  for (let index = 0; index < candidates.length; index++) {
    const modelId = candidates[index]!;
    let prepared: Prepared;
    try {
      prepared = await prepare(ctx, modelId, input);
    } catch (error) {
      // The agent's own model refused ends the call: quietly using another model would hide it.
      if (index === 0 || !isGatewayError(error)) throw error;
      skipped.push(`${modelId} (${error.code})`);
      continue;
    }
    // Outside the attempts: building the offer is no provider failure to retry.
    const tools = await toolsFor(prepared);
    for (let attempt = 1; ; attempt++) {
      const startedAt = Date.now();
      try {
        const output = await callModel({
          model: prepared.model,
          system: input.system,
          messages: input.messages,
          tools,
          // A builtin model that reads no tools streams text and its finish alone: read past the SDK's pipeline.
          direct: prepared.provider === "builtin" && !prepared.readsTools,
          onDelta: input.onDelta ?? (() => undefined),
          ...(prepared.timeoutMs !== null && { abortSignal: AbortSignal.timeout(prepared.timeoutMs) }),
        });
        const cost = costMicros(output.usage, prepared.pricing);
        const succeeded: AttemptEntry = { provider: prepared.provider, model: prepared.modelName, attempt, outcome: "succeeded", status: prepared.provider === "builtin" ? null : 200, durationMs: Date.now() - startedAt };
        const usage: UsageEntry = { provider: prepared.provider, model: prepared.modelName, inputTokens: output.usage.inputTokens, outputTokens: output.usage.outputTokens, costMicros: cost };
        if (record?.succeeded) record.succeeded(runKey, succeeded, usage);
        else {
          record?.attempt(runKey, succeeded);
          record?.usage(runKey, usage);
        }
        return { ...output, modelId, costMicros: cost };
      } catch (error) {
        if (isGatewayError(error)) {
          // The egress door or the final guard refused: nothing (more) was sent, and retrying would not change that.
          record?.policy(runKey, { gate: error.stage, outcome: "denied", code: error.code, subject: modelId, detail: { ...error.detail, purpose: ctx.purpose } });
          throw error;
        }
        const failure = classifyProviderFailure(failureOf(error, Date.now()));
        lastFailure = failure;
        const decision = nextAttemptDecision(failure, { attempt, candidateIndex: index, candidateCount: candidates.length, jitter: deterministicJitter(runKey, modelId, attempt) });
        record?.attempt(runKey, {
          provider: prepared.provider,
          model: prepared.modelName,
          attempt,
          outcome: decision.outcome,
          status: failure.status ?? null,
          errorCode: failure.kind,
          ...(decision.action === "retry" && { backoffMs: decision.backoffMs }),
          durationMs: Date.now() - startedAt,
        });
        if (decision.action === "retry") {
          await sleep(decision.backoffMs);
          continue;
        }
        if (decision.action === "give_up" && decision.code === "context_length_exceeded") {
          throw new GatewayError("provider_error", `${modelId}: the context is longer than the model accepts`, "provider", { failureKind: failure.kind });
        }
        break;
      }
    }
  }
  const kind = lastFailure?.kind ?? "provider_error";
  const tail = skipped.length > 0 ? `; fallbacks refused by policy: ${skipped.join(", ")}` : "";
  throw new GatewayError("provider_error", `the model provider failed (${kind}${lastFailure?.status ? ` ${lastFailure.status}` : ""}) after retries and every usable fallback${tail}`, "provider", {
    failureKind: kind,
    ...(lastFailure?.status !== undefined && { status: lastFailure.status }),
  });
}

/** The gate for one candidate; a refusal throws (and is recorded) before anything is sent. */
async function prepare(ctx: InferenceContext, modelId: string, input: InferenceInput): Promise<Prepared> {
  const parsed = parseModelId(modelId);
  if (parsed?.provider === "builtin") {
    const model = builtinModel(modelId, ctx.agent, ctx.wake);
    if (model) return { model, provider: "builtin", modelName: parsed.model, timeoutMs: null, readsTools: builtinReadsTools(parsed.model) };
  }
  const runKey = ctx.trace?.runKey ?? "";
  const deny = (stage: "scope" | "grant", code: GatewayError["code"], message: string, detail: Record<string, unknown> = {}): never => {
    ctx.trace?.sink.policy(runKey, { gate: stage === "scope" ? "inference.scope" : "inference.grant", outcome: "denied", code, subject: modelId, detail: { ...detail, purpose: ctx.purpose } });
    throw new GatewayError(code, message, stage, detail);
  };
  if (!parsed || parsed.provider === "builtin") return deny("grant", "provider_not_allowed", `model '${modelId}' is not available`);

  const outside = outOfScopeCategories(categoryIdsIn([input.system, input.messages]), ctx.agent.allowedCategoryIds);
  if (outside.length > 0) {
    return deny("scope", "out_of_scope", `the context holds data of categories outside this agent's scope (${outside.join(", ")}); nothing was sent to ${modelId}`, { categoryIds: outside });
  }
  const granted = await ctx.grants.inferenceGrant({ agentId: ctx.agent.id, modelId, categoryIds: [...ctx.agent.allowedCategoryIds] });
  if (!granted.ok) return deny("grant", granted.code as GatewayError["code"], granted.message);
  const { grant } = granted;
  const { model } = remoteModel(grant, {
    mode: deploymentMode(ctx.env.VIGIL_MODE),
    // Every request through the door lands on the run; refusals are recorded by infer() as the call's failure.
    record: (entry) => {
      if (entry.outcome !== "denied") ctx.trace?.sink.policy(runKey, { gate: "egress", outcome: "allowed", subject: entry.host ?? modelId, detail: { purpose: ctx.purpose, method: entry.method, outcome: entry.outcome, status: entry.status, redirects: entry.redirects, durationMs: entry.durationMs } });
    },
    injectOvershare: (seamOn(ctx.env, "faults") ? (ctx.env.VIGIL_FAULT_OVERSHARE ?? "") : "").split(",").includes(grant.endpoint.id),
    ...(ctx.withheld && { withheld: ctx.withheld }),
    ...(ctx.fetch && { fetch: ctx.fetch }),
  });
  ctx.trace?.sink.policy(runKey, { gate: "inference", outcome: "allowed", subject: modelId, detail: { endpointId: grant.endpoint.id, model: grant.model, policyVersion: grant.endpoint.policyVersion, purpose: ctx.purpose } });
  return { model, provider: grant.endpoint.id, modelName: grant.model, timeoutMs: grant.endpoint.timeoutMs, pricing: grant.endpoint.pricing[grant.model], readsTools: true };
}
