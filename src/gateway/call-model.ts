import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { experimental_streamLanguageModelCall as streamLanguageModelCall, type ModelMessage, type ToolSet } from "ai";
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";

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
  /**
   * Read the model's own stream, past the SDK's call pipeline (`callModelDirect`): only for an in-process builtin
   * model offered no tools, whose stream holds text and its finish alone.
   */
  direct?: boolean;
}

/**
 * Calls the model once, streaming text deltas out as they arrive. One call is all the run loop asks for
 * (it executes, gates and loops over tool calls itself), so this uses the SDK's single-call primitive —
 * prompt and tool standardization, tool-input parsing, one stream — not `streamText`, whose multi-step
 * machinery (stitched and teed streams, tool execution, result promises) cost every turn ~1 ms of
 * JavaScript for nothing. Failures are thrown as the SDK raised them (the gateway
 * classifies them); nothing is retried or logged here — the SDK's error log would print request bodies.
 */
export async function callModel(call: ModelCall): Promise<StepOutput> {
  if (call.direct && Object.keys(call.tools).length === 0) return callModelDirect(call);
  const aborted = () => call.abortSignal?.reason ?? Object.assign(new Error("the model call was aborted"), { name: "AbortError" });
  let text = "";
  const toolCalls: ModelToolCall[] = [];
  let usage: StepOutput["usage"] | null = null;
  try {
    const { stream } = await streamLanguageModelCall({
      model: call.model,
      ...(call.system ? { system: call.system } : {}),
      messages: call.messages,
      ...(Object.keys(call.tools).length > 0 ? { tools: call.tools } : {}),
      ...(call.abortSignal ? { abortSignal: call.abortSignal } : {}),
      // The text and tool calls are gathered here; the SDK need not keep a second copy of the content.
      _internal: { collectContent: false },
    });
    for await (const part of stream) {
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
      } else if (part.type === "model-call-end") {
        usage = { inputTokens: part.usage.inputTokens ?? 0, outputTokens: part.usage.outputTokens ?? 0 };
      }
    }
  } catch (error) {
    // An aborted attempt reads as the abort (the gateway tells a timeout from a failure by it), whatever the stream threw.
    if (call.abortSignal?.aborted) throw aborted();
    throw error;
  }
  if (call.abortSignal?.aborted) throw aborted();
  // A stream that stopped before the provider's finish is a bad answer, not an empty one (retried as such).
  if (usage === null) throw new Error("the model's stream ended before its finish");
  return { text, toolCalls, usage };
}

/**
 * `callModel` for a builtin model offered no tools (`builtin:echo`), without the SDK's call pipeline:
 * the prompt is standardized and converted by the SDK's own functions with the arguments
 * `streamLanguageModelCall` gives them, `doStream` gets the options that call gives it, and the model's parts are
 * read as they come — where the SDK piped every part through its transform (tool-call parsing, content collection,
 * call ids, timing) and an async-iterable wrapper, none of which a stream of text and a finish uses. The output,
 * the deltas and the failures are those of the SDK path (test/unit/gateway.test.ts compares them).
 */
async function callModelDirect(call: ModelCall): Promise<StepOutput> {
  const { model, abortSignal } = call;
  const aborted = () => abortSignal?.reason ?? Object.assign(new Error("the model call was aborted"), { name: "AbortError" });
  let text = "";
  let usage: StepOutput["usage"] | null = null;
  try {
    const standardized = await standardizePrompt({ ...(call.system ? { system: call.system } : {}), messages: call.messages });
    const prompt = await convertToLanguageModelPrompt({
      prompt: { instructions: standardized.instructions, messages: standardized.messages },
      supportedUrls: await model.supportedUrls,
      download: undefined,
      abortSignal,
      provider: model.provider.split(".")[0],
    });
    const { stream } = await model.doStream({ tools: undefined, toolChoice: { type: "auto" }, responseFormat: undefined, prompt, providerOptions: undefined, abortSignal, headers: undefined, includeRawChunks: undefined });
    const reader = (stream as ReadableStream<LanguageModelV4StreamPart>).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const part = next.value;
      if (part.type === "text-delta") {
        text += part.delta;
        call.onDelta(part.delta);
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "finish") {
        usage = { inputTokens: part.usage.inputTokens.total ?? 0, outputTokens: part.usage.outputTokens.total ?? 0 };
      } else if (part.type === "tool-call") {
        throw new Error("a builtin model offered no tools made a tool call");
      }
    }
  } catch (error) {
    if (abortSignal?.aborted) throw aborted();
    throw error;
  }
  if (abortSignal?.aborted) throw aborted();
  if (usage === null) throw new Error("the model's stream ended before its finish");
  return { text, toolCalls: [], usage };
}
