import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { agentFor, sessionFor } from "../../http/auth";
import { createRouter } from "../../http/app";
import { SessionParams, SessionView } from "../../schema/agents/sessions";
import { json, problems, security } from "../openapi-helpers";

/** Interactive sessions: explicit close (the inactivity TTL closes them too; src/objects/agent/sessions.ts). */
export const sessionRoutes = createRouter();

sessionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/sessions/{sid}/close",
    summary: "Close an interactive session now; idempotent (a closed session answers as it is)",
    description:
      "Appends `session.closed` (reason `explicit`) to the agent's event log the first time. A later message to the session reopens it (`session.reopened`). A widget token closes only its own visitor's sessions (`default` names its base session); any other sessionId answers 404, as does a session that never had a message.",
    request: { params: SessionParams },
    responses: { 200: json(SessionView, "The session, closed"), 401: problems[401], 403: problems[403], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id, sid } = c.req.valid("param");
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:write");
    // A widget token's sessions live in its visitor namespace; another visitor's looks absent (404).
    const result = await agent.closeSession(sessionFor(principal, sid));
    if (!result.ok) fail(result);
    return c.json(result.session, 200);
  },
);
