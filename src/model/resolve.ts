import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { Agent } from "../schema/agents";
import { createBuiltinModel } from "./builtin";

export interface WakeContext {
  reason: string;
  operatorText: string | null;
  observation: unknown;
  tokenKeys: string[];
}

/** Picks the language model for one run of an agent. Remote providers arrive with the model gateway. */
export function resolveModel(agent: Agent, wake: WakeContext): LanguageModelV3 {
  const [provider, name] = splitModelId(agent.config.modelId);
  if (provider === "builtin" && (name === "echo" || name === "playbook")) {
    return createBuiltinModel(name, { ...wake, playbook: agent.config.playbook, chunkDelayMs: agent.config.modelOptions.chunkDelayMs ?? 0 });
  }
  throw Object.assign(new Error(`model ${agent.config.modelId} is not available`), { code: "provider_not_allowed" });
}

function splitModelId(modelId: string): [string, string] {
  const at = modelId.indexOf(":");
  return [modelId.slice(0, at), modelId.slice(at + 1)];
}
