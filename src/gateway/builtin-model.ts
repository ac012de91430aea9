import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { chunkWords, estimateTokens, parseToolLines, renderArgs, selectPlaybookReply, selectPlaybookRule, type PlaybookToolCall } from "../core/tools/playbook";
import type { Playbook } from "../schema/agents/agents";
import { unquoteUntrusted } from "../core/wakes/quoted-input";

export interface BuiltinContext {
  reason: string;
  playbook: Playbook | null;
  chunkDelayMs: number;
  /**
   * The wake's operator text, only when it was admitted as operator_instruction: `/tool` lines run from it alone,
   * never from channel input or external evidence (a visitor's `/tool` line is plain text).
   */
  operatorText: string | null;
  /** The wake's observation data (for `{{observation.…}}` templates). */
  observation: unknown;
  tokenKeys: string[];
}

interface Turn {
  text: string;
  toolCalls: PlaybookToolCall[];
}

/**
 * Whether a builtin model's answers depend on the tools it is offered. `echo` answers from the last user text alone
 * (its `decide` returns before it looks at `options.tools`, and usage counts the prompt and the answer), so the
 * gateway offers it none; `playbook` reads the offered names.
 */
export function builtinReadsTools(modelName: string): boolean {
  return modelName !== "echo";
}

/**
 * The offline, deterministic provider (SPEC §6). It is a real `ai` SDK language model, so the
 * run loop treats it like a remote one: same tool-call protocol, same usage accounting (`echo`,
 * offered no tools, is read past the SDK's call pipeline: gateway/call-model.ts `callModelDirect`).
 * `playbook` calls tools on its first step (rule tools and operator `/tool` lines) and replies
 * once the results are back.
 */
export function createBuiltinModel(modelName: "echo" | "playbook", context: BuiltinContext): LanguageModelV4 {
  const decide = (options: LanguageModelV4CallOptions): Turn => {
    const text = lastUserText(options.prompt);
    if (modelName === "echo") return { text: `echo: ${text}`, toolCalls: [] };
    const offered = new Set((options.tools ?? []).map((tool) => tool.name));
    const input = { reason: context.reason, text, tokenKeys: context.tokenKeys };
    const templateContext = { text, reason: context.reason, observation: context.observation };
    const rules = context.playbook?.rules ?? [];
    const afterTools = options.prompt.at(-1)?.role === "tool";
    if (!afterTools) {
      const fromRule = selectPlaybookRule(rules, input)?.rule.tools ?? [];
      const fromOperator = context.operatorText ? parseToolLines(context.operatorText) : [];
      const toolCalls = [...fromRule.map((call) => ({ name: call.name, args: renderArgs(call.args, templateContext) as Record<string, unknown> })), ...fromOperator];
      // A call the run did not offer is still made: the run loop answers it with a structured refusal.
      if (toolCalls.length > 0) return { text: "", toolCalls };
    }
    const results = afterTools ? toolResults(options.prompt) : [];
    return { text: selectPlaybookReply(rules, input, context.playbook?.fallbackReply, { ...templateContext, results, offered: [...offered] }).reply, toolCalls: [] };
  };

  return {
    specificationVersion: "v4",
    provider: "builtin",
    modelId: modelName,
    supportedUrls: {},
    async doGenerate(options: LanguageModelV4CallOptions) {
      const turn = decide(options);
      const content: LanguageModelV4Content[] = [];
      if (turn.text) content.push({ type: "text", text: turn.text });
      turn.toolCalls.forEach((call, index) => content.push({ type: "tool-call", toolCallId: `call_${index}`, toolName: call.name, input: JSON.stringify(call.args) }));
      return { content, finishReason: finish(turn), usage: usageFor(options.prompt, turn), warnings: [] };
    },
    async doStream(options: LanguageModelV4CallOptions) {
      const turn = decide(options);
      const delay = context.chunkDelayMs;
      const signal = options.abortSignal;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          controller.enqueue({ type: "stream-start", warnings: [] });
          if (turn.text) {
            controller.enqueue({ type: "text-start", id: "t0" });
            for (const delta of chunkWords(turn.text)) {
              if (signal?.aborted) break;
              if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
              controller.enqueue({ type: "text-delta", id: "t0", delta });
            }
            controller.enqueue({ type: "text-end", id: "t0" });
          }
          turn.toolCalls.forEach((call, index) =>
            controller.enqueue({ type: "tool-call", toolCallId: `call_${index}`, toolName: call.name, input: JSON.stringify(call.args) }),
          );
          controller.enqueue({ type: "finish", finishReason: finish(turn), usage: usageFor(options.prompt, turn) });
          controller.close();
        },
      });
      return { stream };
    },
  };
}

const finish = (turn: Turn) => (turn.toolCalls.length > 0 ? { unified: "tool-calls" as const, raw: "tool_calls" } : { unified: "stop" as const, raw: "stop" });

function lastUserText(prompt: LanguageModelV4Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role !== "user") continue;
    const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
    // Untrusted input reaches every model quoted (core/wakes/quoted-input.ts); the playbook matches the person's words.
    return unquoteUntrusted(text) ?? text;
  }
  return "";
}

/** The latest step's tool results, for `{{results.0.output…}}` in the reply. */
function toolResults(prompt: LanguageModelV4Prompt): unknown[] {
  const last = prompt.at(-1);
  if (!last || last.role !== "tool") return [];
  return last.content.map((part) => (part.type === "tool-result" && part.output.type === "json" ? part.output.value : null));
}

function usageFor(prompt: LanguageModelV4Prompt, turn: Turn): LanguageModelV4Usage {
  const input = estimateTokens(JSON.stringify(prompt));
  const out = estimateTokens(turn.text + JSON.stringify(turn.toolCalls));
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: out, text: out, reasoning: 0 },
  };
}
