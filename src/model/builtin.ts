import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { chunkWords, estimateTokens, selectPlaybookReply } from "../core/playbook";
import type { Playbook } from "../schema/agents";

export interface BuiltinContext {
  reason: string;
  playbook: Playbook | null;
  chunkDelayMs: number;
}

/**
 * The offline, deterministic provider (SPEC §6). It is a real `ai` SDK language model, so the
 * run loop treats it exactly like a remote one: same streaming path, same usage accounting.
 */
export function createBuiltinModel(modelName: "echo" | "playbook", context: BuiltinContext): LanguageModelV3 {
  const reply = (prompt: LanguageModelV3Prompt): string => {
    const text = lastUserText(prompt);
    if (modelName === "echo") return `echo: ${text}`;
    const rules = context.playbook?.rules ?? [];
    return selectPlaybookReply(rules, { reason: context.reason, text }, context.playbook?.fallbackReply).reply;
  };

  return {
    specificationVersion: "v3",
    provider: "builtin",
    modelId: modelName,
    supportedUrls: {},
    async doGenerate(options: LanguageModelV3CallOptions) {
      const text = reply(options.prompt);
      return {
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usageFor(options.prompt, text),
        warnings: [],
      };
    },
    async doStream(options: LanguageModelV3CallOptions) {
      const text = reply(options.prompt);
      const chunks = chunkWords(text);
      const delay = context.chunkDelayMs;
      const signal = options.abortSignal;
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async start(controller) {
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "text-start", id: "t0" });
          for (const delta of chunks) {
            if (signal?.aborted) break;
            if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
            controller.enqueue({ type: "text-delta", id: "t0", delta });
          }
          controller.enqueue({ type: "text-end", id: "t0" });
          controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usageFor(options.prompt, text) });
          controller.close();
        },
      });
      return { stream };
    },
  };
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role !== "user") continue;
    return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
  return "";
}

function usageFor(prompt: LanguageModelV3Prompt, output: string): LanguageModelV3Usage {
  const input = estimateTokens(JSON.stringify(prompt));
  const out = estimateTokens(output);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: out, text: out, reasoning: 0 },
  };
}
