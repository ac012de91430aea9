import { z } from "@hono/zod-openapi";

const UiPart = z.looseObject({ type: z.string().min(1).max(200) });

const UiMessage = z.looseObject({
  id: z.string().min(1).max(128),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(UiPart).max(2_000),
});

/**
 * What the AI SDK's `DefaultChatTransport` posts: the chat id, the messages (all of them, or only the newest: the agent
 * keeps the history), the trigger. Fields a client adds through its `body` option are accepted and ignored.
 */
export const ChatRequestBody = z
  .looseObject({
    id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "must be 1-64 characters of A-Z a-z 0-9 _ -"),
    messages: z.array(UiMessage).min(1).max(10_000),
    trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
    messageId: z.string().max(128).optional(),
  })
  .openapi("ChatRequest", {
    description:
      "The AI SDK UI chat request (`useChat` / `DefaultChatTransport`): `id` names the conversation (the agent's session), " +
      "the last message is acted on — a user message starts a turn, an assistant message whose tool parts are " +
      "`approval-responded` answers those tool approvals",
  });
export type ChatRequestBody = z.infer<typeof ChatRequestBody>;

export interface ApprovalAnswer {
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/** What the last message asks for: a new turn (with the message's id and text), or answers to tool approvals. */
export type ChatIntent =
  | { kind: "turn"; messageId: string; text: string }
  | { kind: "approvals"; answers: ApprovalAnswer[] }
  | { kind: "invalid"; message: string };

/** Reads the request's intent from its last message; pure. */
export function chatIntent(body: ChatRequestBody): ChatIntent {
  const last = body.messages[body.messages.length - 1]!;
  if (last.role === "user") {
    const text = last.parts
      .filter((part) => part.type === "text" && typeof part.text === "string")
      .map((part) => part.text as string)
      .join("\n")
      .trim();
    if (!text) return { kind: "invalid", message: "the last user message has no text part" };
    if (text.length > 32_000) return { kind: "invalid", message: "the message text is longer than 32000 characters" };
    return { kind: "turn", messageId: last.id, text };
  }
  if (last.role === "assistant") {
    const answers = last.parts.flatMap((part) => approvalAnswer(part));
    if (answers.length > 0) return { kind: "approvals", answers };
    return { kind: "invalid", message: "the last assistant message answers no tool approval (no part is approval-responded)" };
  }
  return { kind: "invalid", message: "the last message must be a user message or an assistant message with approval responses" };
}

function approvalAnswer(part: z.infer<typeof UiPart>): ApprovalAnswer[] {
  const isTool = part.type === "dynamic-tool" || part.type.startsWith("tool-");
  if (!isTool || part.state !== "approval-responded") return [];
  const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
  if (typeof approval?.id !== "string" || typeof approval.approved !== "boolean") return [];
  return [{ approvalId: approval.id, approved: approval.approved, ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}) }];
}
