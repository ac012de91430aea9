import { z } from "@hono/zod-openapi";
import { IsoTimestamp, ResourceId } from "../common";
import { DoubleTextingSchema } from "./agents";

export const MESSAGE_KINDS = ["observation", "user", "assistant", "thought", "action", "toolResult", "summary", "system"] as const;
export { AUTHORITIES, type Authority } from "../../core/wakes/provenance";

export const Message = z
  .object({
    id: z.string(),
    agentId: z.string(),
    threadId: z.string(),
    kind: z.enum(MESSAGE_KINDS),
    text: z.string().optional(),
    content: z.unknown().optional(),
    createdAt: IsoTimestamp,
    metadata: z.record(z.string(), z.unknown()),
  })
  .openapi("Message");
export type Message = z.infer<typeof Message>;

export const PostMessageBody = z
  .object({
    text: z.string().min(1).max(32_000),
    sessionId: ResourceId.optional(),
    doubleTexting: DoubleTextingSchema.optional().openapi({ description: "Overrides the agent's config.doubleTexting for this message" }),
  })
  .strict()
  .openapi("PostMessage");

export const ListMessagesQuery = z.object({ threadId: z.string().max(300).optional(), sessionId: ResourceId.optional() });

export const RunAccepted = z.object({ runKey: z.string() }).openapi("RunAccepted");
