import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, requireScope } from "../../http/auth";
import type { AppEnv, Principal } from "../../http/context";
import { requestKeyedId } from "../../http/idempotency";
import type { Failure } from "../../core/runtime/result";
import { AgentIdParam } from "../../schema/common";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

/** Managing an agent's timers or subscriptions needs `agents:write`, and an API key: widget tokens may not. */
export function requireAgentManager(principal: Principal, things: string): void {
  requireScope(principal, "agents:write");
  if (principal.kind === "jwt") throw new ApiError("forbidden", `widget tokens cannot manage ${things}`);
}

/** A `POST /v1/agents/{id}/<things>` create; under an Idempotency-Key the new id derives from it (`idPrefix` + hash). */
export interface AgentCreateSpec<Body extends z.ZodTypeAny, Item extends z.ZodTypeAny, Created> {
  path: string;
  summary: string;
  body: Body;
  item: Item;
  /** The description of the 201 answer. */
  answer: string;
  /** What widget tokens cannot manage (the 403's wording). */
  things: string;
  idPrefix: string;
  create: (c: Context<AppEnv>, input: { tenantId: string; agentId: string; body: z.infer<Body>; keyedId: string | undefined }) => Promise<({ ok: true } & Created) | Failure>;
  view: (created: Created) => z.infer<Item>;
}

/** Registers one per-agent create route (timers, subscriptions): 201 with the created item, problems as problem+json. */
export function agentCreateRoute<Body extends z.ZodTypeAny, Item extends z.ZodTypeAny, Created>(router: OpenAPIHono<AppEnv>, spec: AgentCreateSpec<Body, Item, Created>): void {
  const route = createRoute({
    method: "post",
    path: spec.path,
    summary: spec.summary,
    request: { params: AgentIdParam, ...jsonBody(spec.body), headers: IdempotencyHeader },
    responses: { 201: json(spec.item, spec.answer), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  });
  const handler = async (c: Context<AppEnv>) => {
    const principal = c.get("principal");
    requireAgentManager(principal, spec.things);
    const valid = c.req.valid.bind(c.req) as (target: "param" | "json") => never;
    const body = valid("json") as z.infer<Body>;
    const agentId = (valid("param") as { id: string }).id;
    const result = await spec.create(c, { tenantId: principal.tenantId, agentId, body, keyedId: requestKeyedId(c, principal.tenantId, spec.idPrefix, body) });
    if (!result.ok) fail(result);
    return c.json(spec.view(result), 201);
  };
  // The typed handler signature is derived per literal route; this generic one is checked above instead.
  router.openapi(route, handler as never);
}

/** A `DELETE /v1/agents/{id}/<things>/{<param>}` of an agent's own resource (tombstoned): 200 with the deleted item. */
export interface AgentDeleteSpec<Params extends z.ZodObject, Item extends z.ZodTypeAny, Deleted> {
  path: string;
  summary: string;
  /** `id` (the agent) and the resource's own path parameter. */
  params: Params;
  item: Item;
  /** The description of the 200 answer. */
  answer: string;
  /** What widget tokens cannot manage (the 403's wording). */
  things: string;
  remove: (c: Context<AppEnv>, input: { tenantId: string; param: z.infer<Params> }) => Promise<({ ok: true } & Deleted) | Failure>;
  view: (deleted: Deleted) => z.infer<Item>;
}

/** Registers one per-agent delete route (timers, subscriptions). */
export function agentDeleteRoute<Params extends z.ZodObject, Item extends z.ZodTypeAny, Deleted>(router: OpenAPIHono<AppEnv>, spec: AgentDeleteSpec<Params, Item, Deleted>): void {
  const route = createRoute({ method: "delete", path: spec.path, summary: spec.summary, request: { params: spec.params }, responses: { 200: json(spec.item, spec.answer), 404: problems[404] }, security });
  const handler = async (c: Context<AppEnv>) => {
    const principal = c.get("principal");
    requireAgentManager(principal, spec.things);
    const param = (c.req.valid.bind(c.req) as (target: "param") => never)("param") as z.infer<Params>;
    const result = await spec.remove(c, { tenantId: principal.tenantId, param });
    if (!result.ok) fail(result);
    return c.json(spec.view(result), 200);
  };
  router.openapi(route, handler as never);
}

/** A `GET /v1/agents/{id}/<aspect>` read from the agent's AgentDO with `agents:read` (another tenant's agent is 404). */
export interface AgentReadSpec<Item extends z.ZodTypeAny, Found> {
  path: string;
  summary: string;
  item: Item;
  /** The description of the 200 answer. */
  answer: string;
  read: (agent: ReturnType<typeof agentFor>) => Promise<({ ok: true } & Found) | Failure>;
  view: (found: Found) => z.infer<Item>;
}

/** Registers one per-agent read route (state, memory). */
export function agentReadRoute<Item extends z.ZodTypeAny, Found>(router: OpenAPIHono<AppEnv>, spec: AgentReadSpec<Item, Found>): void {
  const route = createRoute({ method: "get", path: spec.path, summary: spec.summary, request: { params: AgentIdParam }, responses: { 200: json(spec.item, spec.answer), 404: problems[404] }, security });
  const handler = async (c: Context<AppEnv>) => {
    const { id } = (c.req.valid.bind(c.req) as (target: "param") => never)("param") as { id: string };
    const result = await spec.read(agentFor(c.get("principal"), c.env, id, "agents:read"));
    if (!result.ok) fail(result);
    return c.json(spec.view(result), 200);
  };
  router.openapi(route, handler as never);
}
