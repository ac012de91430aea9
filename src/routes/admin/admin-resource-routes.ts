import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Failure } from "../../core/runtime/result";
import { fail } from "../../http/api-error";
import { requireAdminKey, tenantStub } from "../../http/auth";
import type { AppEnv } from "../../http/context";
import { idempotencyKeyOf } from "../../http/idempotency";
import { adminForbidden, IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

type Tenant = ReturnType<typeof tenantStub>;
type Answer<Found> = Promise<({ ok: true } & Found) | Failure>;

/**
 * What every admin-only tenant resource (HTTP tools, MCP servers, outbound webhooks, webhook sources, provider
 * secrets and consents) shares: admin API keys only, the TenantDO answers, the actor is `key:<keyId>`.
 */
interface AdminResource {
  /** Whether the route documents the 403 of a key that is not an admin key (the provider routes do; the others never did). */
  forbidden?: boolean;
}

/** A `POST` that creates one resource: 201 with what `view` shows of it. */
export interface AdminCreateSpec<Body extends z.ZodTypeAny, Created extends z.ZodTypeAny, Result> extends AdminResource {
  path: string;
  summary: string;
  description?: string;
  body: Body;
  created: Created;
  /** The description of the 201 answer. */
  answer: string;
  /**
   * `requestKey` is the request's Idempotency-Key (validated): resources holding a secret derive their id from it
   * instead of going through the generic idempotency store, which would keep the secret in plaintext.
   */
  create: (input: { tenant: Tenant; tenantId: string; actor: string; body: z.infer<Body>; requestKey: string | undefined }, c: Context<AppEnv>) => Answer<Result>;
  view: (result: Result, c: Context<AppEnv>) => z.infer<Created>;
}

const errorsOf = (spec: AdminResource, ...codes: Array<400 | 401 | 404 | 409>) => ({
  ...Object.fromEntries(codes.map((code) => [code, problems[code]])),
  ...(spec.forbidden ? { 403: adminForbidden } : {}),
});

/** Registers one admin create route. */
export function adminCreateRoute<Body extends z.ZodTypeAny, Created extends z.ZodTypeAny, Result>(router: OpenAPIHono<AppEnv>, spec: AdminCreateSpec<Body, Created, Result>): void {
  // Keys in the order the hand-written routes had them: the OpenAPI document stays byte-identical.
  const route = createRoute({
    method: "post",
    path: spec.path,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    request: { ...jsonBody(spec.body), headers: IdempotencyHeader },
    responses: { 201: json(spec.created, spec.answer), ...errorsOf(spec, 400, 401, 409) },
    security,
  });
  const handler = async (c: Context<AppEnv>) => {
    const principal = requireAdminKey(c.get("principal"));
    const requestKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const body = (c.req.valid.bind(c.req) as (target: "json") => never)("json") as z.infer<Body>;
    const tenant = tenantStub(c.env, principal.tenantId);
    const result = await spec.create({ tenant, tenantId: principal.tenantId, actor: `key:${principal.keyId}`, body, requestKey }, c);
    if (!result.ok) fail(result);
    return c.json(spec.view(result, c), 201);
  };
  // The typed handler signature is derived per literal route; this generic one is checked above instead.
  router.openapi(route, handler as never);
}

/** One by-id operation: its summary, the 200 answer's description, and the TenantDO call. */
interface ByIdOperation<Call> {
  summary: string;
  answer: string;
  call: Call;
}

/** `GET` and/or `DELETE` of `<path>/{id}`: 200 with what `view` shows of the found (or deleted) resource, else 404. */
export interface AdminByIdSpec<Params extends z.ZodObject, Item extends z.ZodTypeAny, Found> extends AdminResource {
  path: string;
  /** `{ id }`, as the resource's OpenAPI parameter. */
  params: Params;
  item: Item;
  get?: ByIdOperation<(tenant: Tenant, id: string) => Answer<Found>>;
  delete?: ByIdOperation<(tenant: Tenant, actor: string, id: string) => Answer<Found>>;
  /** After `get`/`delete`, so that `Found` is inferred from their answers. */
  view: (found: Found, c: Context<AppEnv>) => z.infer<Item>;
}

/** Registers the get and delete routes of one admin resource, in that order. */
export function adminByIdRoutes<Params extends z.ZodObject, Item extends z.ZodTypeAny, Found>(router: OpenAPIHono<AppEnv>, spec: AdminByIdSpec<Params, Item, Found>): void {
  const register = (method: "get" | "delete", operation: ByIdOperation<unknown>, call: (tenant: Tenant, actor: string, id: string) => Answer<Found>) => {
    const route = createRoute({
      method,
      path: spec.path,
      summary: operation.summary,
      request: { params: spec.params },
      responses: { 200: json(spec.item, operation.answer), ...errorsOf(spec, 401, 404) },
      security,
    });
    const handler = async (c: Context<AppEnv>) => {
      const principal = requireAdminKey(c.get("principal"));
      const { id } = (c.req.valid.bind(c.req) as (target: "param") => never)("param") as { id: string };
      const result = await call(tenantStub(c.env, principal.tenantId), `key:${principal.keyId}`, id);
      if (!result.ok) fail(result);
      return c.json(spec.view(result, c), 200);
    };
    router.openapi(route, handler as never);
  };
  const { get, delete: remove } = spec;
  if (get) register("get", get, (tenant, _actor, id) => get.call(tenant, id));
  if (remove) register("delete", remove, remove.call);
}
