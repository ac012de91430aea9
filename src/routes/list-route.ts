import { createRoute, type OpenAPIHono, type z, z as zod } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ErrorCode } from "../core/runtime/result";
import { ApiError, fail } from "../http/api-error";
import { agentFor, requireAdminKey, requireApiKey, requireScope, tenantStub } from "../http/auth";
import type { AppEnv } from "../http/context";
import { AgentIdParam, page, PaginationQuery, type Page, type Problem } from "../schema/common";
import { adminForbidden, json, problems, security } from "./openapi-helpers";

type ProblemResponse = { content: { "application/problem+json": { schema: typeof Problem } }; description: string };
type ListAnswer<Row> = ({ ok: true } & Page<Row>) | { ok: false; code: ErrorCode; message: string; oldestSeq?: number };

/** A paged `GET` list: `{data, nextCursor}` read from a Durable Object, failures as problem+json. */
export interface ListRouteSpec<Item extends z.ZodTypeAny, Query extends z.ZodObject, Params extends z.ZodObject, Row> {
  path: string;
  tags?: string[];
  summary: string;
  /** The path parameters, if any. */
  params?: Params;
  /** `limit` and `cursor` at least (default: PaginationQuery). */
  query?: Query;
  item: Item;
  /** The description of the 200 answer. */
  pageDescription: string;
  errors: Partial<Record<400 | 401 | 403 | 404, ProblemResponse>>;
  /** Authorises the caller and reads the page; `query` is already validated. */
  read: (c: Context<AppEnv>, input: { param: z.infer<Params>; query: z.infer<Query> }) => Promise<ListAnswer<Row>>;
  /** What the API shows of each row (default: the row itself). */
  view?: (rows: Row[], c: Context<AppEnv>) => z.infer<Item>[];
  /** A failure is an invalid cursor, named as the failing field (the admin lists' problem shape). */
  cursorField?: boolean;
}

/** Registers one paged list route; every paged list of the API goes through here. */
export function listRoute<Item extends z.ZodTypeAny, Query extends z.ZodObject = typeof PaginationQuery, Params extends z.ZodObject = z.ZodObject, Row = z.infer<Item>>(
  router: OpenAPIHono<AppEnv>,
  spec: ListRouteSpec<Item, Query, Params, Row>,
): void {
  // Keys in the order the hand-written routes had them: the OpenAPI document stays byte-identical.
  const route = createRoute({
    method: "get",
    path: spec.path,
    ...(spec.tags ? { tags: spec.tags } : {}),
    summary: spec.summary,
    request: { ...(spec.params ? { params: spec.params } : {}), query: spec.query ?? PaginationQuery },
    responses: { 200: json(page(spec.item), spec.pageDescription), ...spec.errors },
    security,
  });
  const handler = async (c: Context<AppEnv>) => {
    const valid = c.req.valid.bind(c.req) as (target: "param" | "query") => never;
    const result = await spec.read(c, { param: spec.params ? valid("param") : (undefined as never), query: valid("query") });
    if (!result.ok) {
      if (spec.cursorField) throw new ApiError(result.code, result.message, { fields: [{ path: "cursor", message: "not a valid cursor" }] });
      fail(result);
    }
    return c.json({ data: spec.view ? spec.view(result.data, c) : result.data, nextCursor: result.nextCursor }, 200);
  };
  // The typed handler signature is derived per literal route; this generic one is checked above instead.
  router.openapi(route, handler as never);
}

type ShortListSpec<Item extends z.ZodTypeAny, Query extends z.ZodObject, Row> = Pick<ListRouteSpec<Item, Query, z.ZodObject, Row>, "path" | "summary" | "query" | "item" | "pageDescription">;

/** An admin-only tenant list (admin API keys only; a bad cursor is named as the failing field). */
export function adminListRoute<Item extends z.ZodTypeAny, Row = z.infer<Item>>(
  router: OpenAPIHono<AppEnv>,
  spec: ShortListSpec<Item, typeof PaginationQuery, Row> & { read: (tenant: ReturnType<typeof tenantStub>, query: z.infer<typeof PaginationQuery>) => Promise<ListAnswer<Row>> },
): void {
  const { read, ...rest } = spec;
  listRoute<Item, typeof PaginationQuery, z.ZodObject, Row>(router, {
    ...rest,
    errors: { 400: problems[400], 401: problems[401], 403: adminForbidden },
    read: (c, { query }) => read(tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId), query),
    cursorField: true,
  });
}

/** One agent's list under `/v1/agents/{id}/…`, read from its AgentDO with `agents:read` (another tenant's agent is 404). */
export function agentListRoute<Item extends z.ZodTypeAny, Query extends z.ZodObject, Row = z.infer<Item>>(
  router: OpenAPIHono<AppEnv>,
  spec: ShortListSpec<Item, Query, Row> & { read: (agent: ReturnType<typeof agentFor>, query: z.infer<Query>) => Promise<ListAnswer<Row>> },
): void {
  const { read, ...rest } = spec;
  listRoute<Item, Query, typeof AgentIdParam, Row>(router, {
    ...rest,
    params: AgentIdParam,
    errors: { 400: problems[400], 404: problems[404] },
    read: (c, { param: { id }, query }) => read(agentFor(c.get("principal"), c.env, id, "agents:read"), query),
  });
}

/** A whole list in one answer (`nextCursor` always null: the list is short by construction), read with `agents:read` by API keys. */
export function wholeListRoute<Item extends z.ZodTypeAny>(
  router: OpenAPIHono<AppEnv>,
  spec: Pick<ListRouteSpec<Item, z.ZodObject, z.ZodObject, never>, "path" | "summary" | "item" | "pageDescription"> & { read: (tenant: ReturnType<typeof tenantStub>) => Promise<z.infer<Item>[]> },
): void {
  const route = createRoute({
    method: "get",
    path: spec.path,
    summary: spec.summary,
    responses: { 200: json(zod.object({ data: zod.array(spec.item), nextCursor: zod.null() }), spec.pageDescription), 401: problems[401] },
    security,
  });
  const handler = async (c: Context<AppEnv>) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:read");
    return c.json({ data: await spec.read(tenantStub(c.env, principal.tenantId)), nextCursor: null }, 200);
  };
  router.openapi(route, handler as never);
}
