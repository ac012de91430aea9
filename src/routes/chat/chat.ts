import { createRoute, z } from "@hono/zod-openapi";
import { createUIMessageStreamResponse } from "ai";
import { threadIds } from "../../core/ids/run-keys";
import { widgetSessionId } from "../../core/runtime/widget-session";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, streamGuardFor, widgetNamespace } from "../../http/auth";
import { createRouter } from "../../http/app";
import type { Principal } from "../../http/context";
import type { Env } from "../../env";
import { guardStream } from "../../http/stream-guard";
import { takeFrames } from "../../mcp-server/reply";
import { AgentIdParam } from "../../schema/common";
import { resolveDecisionAs } from "../agents/decision-resolution";
import { jsonBody, problems, security } from "../openapi-helpers";
import { ChatRequestBody, chatIntent, type ApprovalAnswer } from "./chat-request";
import { RunChunks, type VigilChunk } from "./ui-chunks";

/** `POST /v1/agents/:id/chat`: the AI SDK's UI message stream protocol over the agent's own turns and decisions. */
export const chatRoutes = createRouter();

const WIDGET_CHAT_ID_MAX = 37;

chatRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/chat",
    summary: "Chat with the agent through the AI SDK's useChat: the UI message stream protocol (v1)",
    description:
      "The conversation is the agent's session named by the chat `id` (a widget token's chat ids name sessions of its own " +
      "visitor). The agent keeps the history: only the last message is read. A user message starts a turn (its message id " +
      "is the turn id, so a resent message replays the same run); an assistant message whose tool parts are " +
      "`approval-responded` answers those approvals (the `approvalId` is the decision id) and streams the run on. " +
      "The stream ends at `finish` when the run ends or waits on a person: a tool approval as `tool-approval-request`, " +
      "an ask_user question as a `data-decision` part (answer it with POST /v1/decisions/{id}/resolve).",
    request: { params: AgentIdParam, ...jsonBody(ChatRequestBody) },
    responses: {
      200: {
        content: { "text/event-stream": { schema: z.string() } },
        headers: z.object({ "x-vercel-ai-ui-message-stream": z.literal("v1") }),
        description: "UI message chunks as SSE `data:` lines, ending with `data: [DONE]`",
      },
      400: problems[400],
      401: problems[401],
      403: problems[403],
      404: problems[404],
      409: { ...problems[409], description: "run_in_progress (doubleTexting reject) or decision_not_pending" },
      423: problems[423],
      429: problems[429],
    },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:write");
    const sessionId = chatSession(principal, body.id);
    const intent = chatIntent(body);
    if (intent.kind === "invalid") throw new ApiError("validation_failed", intent.message, { fields: [{ path: "messages", message: intent.message }] });
    const guard = streamGuardFor(c.env, principal);
    if (intent.kind === "turn") {
      const result = await agent.submitTurn({ text: intent.text, sessionId, turnId: `chat_${intent.messageId}`, credential: principal.kind, stream: true });
      if (!result.ok) {
        if (result.code === "rate_limited") throw new ApiError("rate_limited", result.message, { retryAfterSeconds: result.retryAfterSeconds ?? 60 });
        fail(result);
      }
      return chatResponse(guardStream(result.stream!, guard), new RunChunks(result.runKey), result.runKey) as never;
    }
    // Open the agent's live events before answering, so the run's continuation cannot slip past the stream.
    const head = await agent.listMessages({ limit: 1, threadId: threadIds.interactive(id, sessionId) });
    if (!head.ok) fail(head);
    const opened = await agent.openEvents(head.eventSeq, widgetNamespace(principal));
    if (!opened.ok) fail(opened);
    let runKey: string;
    try {
      runKey = await answerApprovals(c.env, principal, id, intent.answers);
    } catch (error) {
      await opened.stream.cancel().catch(() => undefined);
      throw error;
    }
    return chatResponse(guardStream(opened.stream, guard), new RunChunks(runKey), undefined) as never;
  },
);

/** The session a chat id names: itself for an API key; a session of the visitor's own namespace for a widget token. */
function chatSession(principal: Principal, chatId: string): string {
  if (principal.kind !== "jwt") return chatId;
  if (chatId.length > WIDGET_CHAT_ID_MAX) {
    throw new ApiError("validation_failed", `a widget token's chat id is at most ${WIDGET_CHAT_ID_MAX} characters`, { fields: [{ path: "id", message: "too long" }] });
  }
  return widgetSessionId(principal.subject, chatId);
}

/** Resolves each answered approval through the decision resolution every door shares; returns the run they belong to. */
async function answerApprovals(env: Env, principal: Principal, agentId: string, answers: ApprovalAnswer[]): Promise<string> {
  let runKey: string | null = null;
  for (const answer of answers) {
    const resolution = { resolutionType: answer.approved ? "approve" : "reject", ...(answer.reason ? { rationale: answer.reason } : {}) } as const;
    const decision = await resolveDecisionAs(env, principal, answer.approvalId, resolution, agentId);
    if (decision.type !== "decision/tool_approval") throw new ApiError("validation_failed", "an approval response answers tool approvals only", { fields: [{ path: "messages", message: "not a tool approval" }] });
    runKey ??= decision.runKey as string;
  }
  return runKey!;
}

/** The run's Vigil SSE read as frames and translated chunk by chunk; reading stops where the translation ends. */
function chatResponse(source: ReadableStream<Uint8Array>, chunks: RunChunks, messageId: string | undefined): Response {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const stream = new ReadableStream<VigilChunk>({
    start(controller) {
      for (const chunk of chunks.open(messageId)) controller.enqueue(chunk);
    },
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          if (!chunks.done) controller.enqueue({ type: "error", errorText: "the event stream ended before the run did; its reply stays in the agent's history" });
          controller.close();
          return;
        }
        buffer += decoder.decode(value, { stream: true });
        const parsed = takeFrames(buffer);
        buffer = parsed.rest;
        const out = parsed.frames.flatMap((frame) => chunks.push(frame));
        for (const chunk of out) controller.enqueue(chunk);
        if (chunks.done) {
          controller.close();
          await reader.cancel().catch(() => undefined);
          return;
        }
        if (out.length > 0) return;
      }
    },
    cancel: () => reader.cancel().catch(() => undefined),
  });
  return createUIMessageStreamResponse({ stream });
}
