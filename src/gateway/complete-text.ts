/**
 * One text completion without tools through the same gate, egress door, retries and fallbacks as
 * a run's model call — for side calls such as compaction summaries. Failures throw an Error with
 * `code`: any gate code, `rate_limited` when the last provider answer was a 429, else `provider_error`.
 */
import type { ModelMessage } from "ai";
import { EMPTY_WAKE } from "./resolve";
import type { Agent } from "../schema/agents/agents";
import { GatewayError, isGatewayError } from "./errors";
import { infer, type GatewayEnv, type GrantSource, type TraceSink } from "./gateway";

export interface CompleteTextRequest {
  env: GatewayEnv;
  agent: Agent;
  /** Why (e.g. `compaction`); recorded with the gate decisions. */
  purpose: string;
  system: string | null;
  messages: ModelMessage[];
  /** Where attempts, gate decisions and usage rows go; `runKey` keys them (a run's, or a job's own). */
  trace?: { runKey: string; sink: TraceSink };
  /** The tenant's half of the gate (in a Durable Object: the TenantDO stub). */
  grants: GrantSource;
  /** Default: a real timer between retries. */
  sleep?: (ms: number) => Promise<void>;
}

export async function completeText(request: CompleteTextRequest): Promise<{ text: string; usage: { inputTokens: number; outputTokens: number; costMicros: number } }> {
  try {
    const output = await infer(
      { env: request.env, grants: request.grants, agent: request.agent, wake: { ...EMPTY_WAKE, reason: request.purpose }, purpose: request.purpose,
        ...(request.trace && { trace: request.trace }),
        ...(request.sleep && { sleep: request.sleep }),
      },
      { system: request.system, messages: request.messages },
    );
    return { text: output.text, usage: { ...output.usage, costMicros: output.costMicros } };
  } catch (error) {
    if (isGatewayError(error) && error.code === "provider_error" && error.detail.failureKind === "rate_limited") {
      throw new GatewayError("rate_limited", error.message, error.stage, error.detail);
    }
    throw error;
  }
}
