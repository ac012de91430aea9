import type { LanguageModelV4 } from "@ai-sdk/provider";
import { streamText, type ModelMessage, type ToolSet } from "ai";

/** A tool call as the model made it; the run loop validates, gates and executes it. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface StepOutput {
  text: string;
  toolCalls: ModelToolCall[];
  usage: { inputTokens: number; outputTokens: number };
}

export interface ModelCall {
  model: LanguageModelV4;
  system: string | null;
  messages: ModelMessage[];
  tools: ToolSet;
  onDelta: (delta: string) => void;
  /** Bounds one attempt (the endpoint's timeout). */
  abortSignal?: AbortSignal;
}

/**
 * Calls the model once, streaming text deltas out as they arrive. Failures are thrown as the SDK
 * raised them (the gateway classifies them); the SDK retries nothing and logs nothing itself —
 * its default error log would print request bodies.
 */
export async function callModel(call: ModelCall): Promise<StepOutput> {
  const result = streamText({
    model: call.model,
    ...(call.system ? { system: call.system } : {}),
    messages: call.messages,
    ...(Object.keys(call.tools).length > 0 ? { tools: call.tools } : {}),
    ...(call.abortSignal ? { abortSignal: call.abortSignal } : {}),
    maxRetries: 0,
    onError: () => undefined,
  });
  let text = "";
  const toolCalls: ModelToolCall[] = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") {
      text += part.text;
      call.onDelta(part.text);
    } else if (part.type === "tool-call") {
      toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
    } else if (part.type === "tool-error" && "toolCallId" in part) {
      // An unparsable call still gets a plan row and a structured refusal.
      toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: (part as { input?: unknown }).input ?? {} });
    } else if (part.type === "error") {
      throw part.error;
    } else if (part.type === "abort") {
      throw call.abortSignal?.reason ?? Object.assign(new Error("the model call was aborted"), { name: "AbortError" });
    }
  }
  const usage = await result.totalUsage;
  return { text, toolCalls, usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 } };
}

