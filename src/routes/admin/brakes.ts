import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { requireApiKey, requireScope, tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { actorOf } from "../../http/context";
import { idempotencyKeyOf, idempotent, requestKeyedId } from "../../http/idempotency";
import { BrakeIdParam, BrakeView, EngageBrakeBody, ListBrakesQuery } from "../../schema/admin/brakes";
import { PaginationQuery, Problem } from "../../schema/common";
import { listRoute } from "../list-route";
import { adminForbidden, IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

/**
 * Brakes / kill switches: engaging and releasing need an admin API key; any API key with
 * agents:read may list them. Widget tokens never reach them.
 */
export const brakeRoutes = createRouter();
brakeRoutes.post("/v1/brakes", idempotent());
brakeRoutes.post("/v1/brakes/:id/release", idempotent());

const unprocessable = { content: { "application/problem+json": { schema: Problem } }, description: "The target agent does not exist" } as const;

brakeRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/brakes",
    summary: "Engage a brake: stop new wakes, block mutating tools, settle in-flight runs",
    description:
      "scope all | agent | kind | tool (target = agent id, kind or tool name); behaviour pause (read tools still run, runs end skipped_sleeping/brake_paused at their next step) or kill (every tool stops, runs end failed_terminal/brake_killed); release manual | timer (releaseAt) | decision (opens a keep/release decision).",
    request: { ...jsonBody(EngageBrakeBody), headers: IdempotencyHeader },
    responses: { 201: json(BrakeView, "The engaged brake"), 400: problems[400], 401: problems[401], 403: adminForbidden, 422: unprocessable },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const body = c.req.valid("json");
    const result = await tenantStub(c.env, principal.tenantId).engageBrake(actorOf(principal), body, requestKeyedId(c, principal.tenantId, "brk_", body));
    if (!result.ok) fail(result);
    return c.json(result.brake, 201);
  },
);

listRoute(brakeRoutes, {
  path: "/v1/brakes",
  summary: "The tenant's brakes, newest first (?status=active|released)",
  query: PaginationQuery.merge(ListBrakesQuery),
  item: BrakeView,
  pageDescription: "A page of brakes",
  errors: { 400: problems[400], 401: problems[401], 403: adminForbidden },
  read: (c, { query }) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:read");
    return tenantStub(c.env, principal.tenantId).listBrakes(query);
  },
});

brakeRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/brakes/{id}/release",
    summary: "Release an active brake by hand (whatever its release condition)",
    request: { params: BrakeIdParam, headers: IdempotencyHeader },
    responses: { 200: json(BrakeView, "The released brake"), 401: problems[401], 403: adminForbidden, 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const keyed = idempotencyKeyOf(c.req.header("idempotency-key")) !== undefined;
    const result = await tenantStub(c.env, principal.tenantId).releaseBrake(actorOf(principal), c.req.valid("param").id, keyed);
    if (!result.ok) fail(result);
    return c.json(result.brake, 200);
  },
);
