import type { z } from "@hono/zod-openapi";
import { ApiError, fail } from "../../http/api-error";
import { requireScope, tenantStub, widgetNamespace } from "../../http/auth";
import { actorOf, type Principal } from "../../http/context";
import type { Env } from "../../env";
import type { ResolveBody } from "./decisions";

/** The decision as resolved (the `Decision` schema of the resolve route). */
export type ResolvedDecision = { id: string; agentId: string; type: string; runKey: string | null } & Record<string, unknown>;

/**
 * The one path by which a person's answer resolves a decision, whichever door it came through (the REST resolve route,
 * the widget, a chat client's tool-approval response): scope, the standing-approval rule, the tenant's resolution
 * (which applies the widget token's agents and visitor namespace), and its failures as problems. `onlyAgent` narrows
 * the decisions the answer may reach to that agent's (the caller checked the principal may use it).
 */
export async function resolveDecisionAs(
  env: Env,
  principal: Principal,
  id: string,
  body: z.infer<typeof ResolveBody>,
  onlyAgent?: string,
): Promise<ResolvedDecision> {
  requireScope(principal, "agents:write");
  // A standing approval outlives the conversation that granted it: only an API key may grant one.
  if (body.alwaysApprove && principal.kind === "jwt") throw new ApiError("forbidden", "alwaysApprove needs an API key; widget tokens approve one call at a time");
  const agents = onlyAgent !== undefined ? [onlyAgent] : principal.kind === "jwt" ? principal.agents : undefined;
  const result = await tenantStub(env, principal.tenantId).resolveDecision(actorOf(principal), id, body, agents, widgetNamespace(principal));
  if (!result.ok) {
    if (result.code === "validation_failed") throw new ApiError("validation_failed", result.message, { fields: [{ path: result.field, message: result.message }] });
    fail(result);
  }
  return result.decision as unknown as ResolvedDecision;
}
