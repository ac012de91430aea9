import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { Agent } from "../schema/agents/agents";
import { createBuiltinModel } from "./builtin-model";

export interface WakeContext {
  reason: string;
  operatorText: string | null;
  observation: unknown;
  tokenKeys: string[];
}

/** A wake that brings nothing for the builtin models to read (a compaction summary, a side call). */
export const EMPTY_WAKE: WakeContext = { reason: "manual", operatorText: null, observation: null, tokenKeys: [] };

/**
 * The builtin (in-process, offline) model named by `modelId`, or null when the id names a remote
 * provider — those go through the gateway's inference gate (src/gateway/).
 */
export function builtinModel(modelId: string, agent: Agent, wake: WakeContext): LanguageModelV4 | null {
  if (modelId === "builtin:echo" || modelId === "builtin:playbook") {
    const name = modelId === "builtin:echo" ? "echo" : "playbook";
    return createBuiltinModel(name, { ...wake, playbook: agent.config.playbook, chunkDelayMs: agent.config.modelOptions.chunkDelayMs ?? 0 });
  }
  return null;
}
