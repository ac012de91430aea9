import { z } from "@hono/zod-openapi";
import { AgentIdParam, IsoTimestamp, ResourceId } from "../common";

/** An interactive session: open until closed explicitly or by its inactivity TTL; a new turn reopens it. */
export const SessionView = z
  .object({
    sessionId: z.string(),
    threadId: z.string(),
    status: z.enum(["open", "closed"]),
    openedAt: IsoTimestamp,
    lastActivityAt: IsoTimestamp,
    expiresAt: IsoTimestamp.nullable().openapi({ description: "the inactivity deadline while open" }),
    closedAt: IsoTimestamp.nullable(),
    closeReason: z.enum(["explicit", "idle_timeout"]).nullable(),
  })
  .openapi("Session");
export type SessionView = z.infer<typeof SessionView>;

export const SessionParams = AgentIdParam.extend({
  sid: ResourceId.openapi({ param: { name: "sid", in: "path" }, description: "the sessionId (a widget token: its own session name, or default)" }),
});
