import type { UIMessageChunk } from "ai";

/** One frame of a run's Vigil SSE stream: the event type and its JSON (`{type, runKey, data, …}`). */
export interface RunFrame {
  event: string;
  data: { runKey?: string | null; data?: Record<string, unknown> } | null;
}

/** What a decision the run waits on looks like to a chat client that cannot answer it with a tool approval. */
export interface DecisionData {
  decisionId: string;
  kind: string;
  question?: unknown;
  options?: unknown;
}

export type VigilChunk = UIMessageChunk<unknown, { decision: DecisionData }>;

/**
 * Turns one run's Vigil events into the AI SDK's UI message stream chunks. Pure and stateful per response:
 * text deltas become text parts (an assistant message that came without deltas — a replay — becomes one whole),
 * `thought` messages reasoning parts, tool calls dynamic tool parts with their input and output, a tool call waiting
 * for a person a `tool-approval-request` whose `approvalId` is the decision id (a rejected call `tool-output-denied`),
 * and the run's end `finish`
 * (or `error`). The chunk stream ends where the client must act: at a pending decision or the run's end.
 */
export class RunChunks {
  private textId: string | null = null;
  private textCount = 0;
  private step: number | null = null;
  /** True once the stream has said all it will: the caller stops reading. */
  done = false;

  constructor(private readonly runKey: string) {}

  /** The chunks that open the response; `messageId` is absent when the response continues the client's last message. */
  open(messageId: string | undefined): VigilChunk[] {
    return [messageId === undefined ? { type: "start" } : { type: "start", messageId }, { type: "start-step" }];
  }

  /** The chunks one frame adds; frames of other runs add none. */
  push(frame: RunFrame): VigilChunk[] {
    if (this.done || frame.data?.runKey !== this.runKey) return [];
    const payload = frame.data.data ?? {};
    switch (frame.event) {
      case "text.delta":
        return [...this.stepTo(payload.step), ...this.textDelta(String(payload.delta ?? ""))];
      case "message.appended":
        return this.message(payload.message as AppendedMessage | undefined);
      case "tool.called":
        return [
          ...this.stepTo(payload.step),
          ...this.closeText(),
          { type: "tool-input-available", toolCallId: String(payload.operationId), toolName: String(payload.toolName), input: payload.args ?? {}, dynamic: true },
        ];
      case "decision.requested":
        return this.decision(payload);
      case "run.completed":
        return this.finish([{ type: "finish-step" }, { type: "finish", finishReason: "stop" }]);
      case "run.failed":
        return this.finish([{ type: "error", errorText: `the run failed (${String(payload.errorCode ?? payload.status ?? "failed")})` }]);
      default:
        return [];
    }
  }

  private stepTo(step: unknown): VigilChunk[] {
    if (typeof step !== "number" || step === this.step) return [];
    const first = this.step === null;
    this.step = step;
    return first ? [] : [...this.closeText(), { type: "finish-step" }, { type: "start-step" }];
  }

  private textDelta(delta: string): VigilChunk[] {
    const out: VigilChunk[] = [];
    if (this.textId === null) {
      this.textId = `text-${++this.textCount}`;
      out.push({ type: "text-start", id: this.textId });
    }
    out.push({ type: "text-delta", id: this.textId, delta });
    return out;
  }

  private closeText(): VigilChunk[] {
    if (this.textId === null) return [];
    const id = this.textId;
    this.textId = null;
    return [{ type: "text-end", id }];
  }

  private message(message: AppendedMessage | undefined): VigilChunk[] {
    if (!message) return [];
    if (message.kind === "assistant") {
      // Streamed already: the message only closes its text part. Else (a replay has no deltas) it is the whole text.
      if (this.textId !== null) return this.closeText();
      return message.text ? [...this.textDelta(message.text), ...this.closeText()] : [];
    }
    if (message.kind === "thought" && message.text) {
      const id = `reasoning-${++this.textCount}`;
      return [...this.closeText(), { type: "reasoning-start", id }, { type: "reasoning-delta", id, delta: message.text }, { type: "reasoning-end", id }];
    }
    if (message.kind === "toolResult") return this.toolResult(message);
    return [];
  }

  private toolResult(message: AppendedMessage): VigilChunk[] {
    const toolCallId = String(message.metadata?.operationId ?? "");
    if (!toolCallId) return [];
    const result = (message.content ?? {}) as { ok?: boolean; output?: unknown; code?: string; message?: string };
    if (result.ok) return [{ type: "tool-output-available", toolCallId, output: result.output ?? null, dynamic: true }];
    // A person's rejection is the tool result `rejected`: to the chat client, a denied approval.
    if (result.code === "rejected") return [{ type: "tool-output-denied", toolCallId }];
    return [{ type: "tool-output-error", toolCallId, errorText: `${result.code ?? "error"}: ${result.message ?? ""}`.trim(), dynamic: true }];
  }

  private decision(payload: Record<string, unknown>): VigilChunk[] {
    const decisionId = String(payload.decisionId);
    if (payload.kind === "tool_approval") {
      const request: VigilChunk = { type: "tool-approval-request", approvalId: decisionId, toolCallId: String(payload.operationId) };
      return this.finish([...this.closeText(), request, { type: "finish-step" }, { type: "finish", finishReason: "tool-calls" }]);
    }
    const data: DecisionData = { decisionId, kind: String(payload.kind), question: payload.question, options: payload.options };
    return this.finish([...this.closeText(), { type: "data-decision", id: decisionId, data }, { type: "finish-step" }, { type: "finish", finishReason: "other" }]);
  }

  private finish(chunks: VigilChunk[]): VigilChunk[] {
    this.done = true;
    return [...this.closeText(), ...chunks];
  }
}

interface AppendedMessage {
  kind?: string;
  text?: string;
  content?: unknown;
  metadata?: Record<string, unknown>;
}
