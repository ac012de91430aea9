import { createRoute, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Scope } from "../../config";
import { fail } from "../../http/api-error";
import { createRouter } from "../../http/app";
import { requireApiKey, requireScope, tenantStub } from "../../http/auth";
import type { AppEnv, Principal } from "../../http/context";
import { idempotent, requestKeyedId } from "../../http/idempotency";
import { KIND_META } from "../../objects/tenant/journal";
import { Problem } from "../../schema/common";
import {
  JOURNAL_KINDS,
  JOURNAL_TYPES,
  JournalDeleteQuery,
  JournalIdParam,
  journalListQuery,
  JournalSchemas,
  type JournalFilters,
  type JournalType,
} from "../../schema/agents/journal";
import { listRoute } from "../list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

/** Journal CRUD under /v1/journal/… (categories, tasks, checklists, checklist items, time entries, day plans, ratings, entries). */
export const journalRoutes = createRouter();

const problem = (description: string) => ({ content: { "application/problem+json": { schema: Problem } }, description });
const forbidden = problem("Missing scope, or a widget token (the journal is for API keys only)");
const unprocessable = problem("A referenced record (category, task, checklist, rating target) does not exist");
const tags = ["journal"];

/** The journal is the tenant's own data: API keys with the scope only; widget tokens get 403 whatever they carry. */
function journalCaller(c: Context<AppEnv>, scope: Scope): Extract<Principal, { kind: "apiKey" }> {
  const principal = c.get("principal");
  requireApiKey(principal);
  requireScope(principal, scope);
  return principal;
}

function registerKind(type: JournalType): void {
  const { path, noun } = JOURNAL_KINDS[type];
  // Erased to the common shape so one handler body serves every kind; each kind's schema still documents and validates it.
  const schemas: { create: z.ZodTypeAny; patch: z.ZodTypeAny; record: z.ZodTypeAny } = JournalSchemas[type];
  const collection = `/v1/journal/${path}`;
  const item = `${collection}/{id}`;

  journalRoutes.post(collection, idempotent());
  journalRoutes.openapi(
    createRoute({
      method: "post",
      path: collection,
      tags,
      summary: `Create a ${noun}`,
      request: { ...jsonBody(schemas.create), headers: IdempotencyHeader },
      responses: { 201: json(schemas.record, `The ${noun}`), 400: problems[400], 401: problems[401], 403: forbidden, 409: problems[409], 422: unprocessable },
      security,
    }),
    async (c) => {
      const principal = journalCaller(c, "journal:write");
      const body = c.req.valid("json");
      const keyedId = requestKeyedId(c, principal.tenantId, KIND_META[type].idPrefix, body);
      const result = await tenantStub(c.env, principal.tenantId).journalCreate(type, body, undefined, keyedId);
      if (!result.ok) fail(result);
      return c.json(result.record, 201);
    },
  );

  listRoute(journalRoutes, {
    path: collection,
    tags,
    summary: `List ${path.replace("-", " ")} (oldest first; filters: ${JOURNAL_KINDS[type].filters.join(", ") || "none"})`,
    query: journalListQuery(type),
    item: schemas.record,
    pageDescription: `A page of ${path}`,
    errors: { 400: problems[400], 401: problems[401], 403: forbidden },
    read: (c, { query }) => {
      const principal = journalCaller(c, "journal:read");
      const { limit, cursor, ...filters } = query as { limit: number; cursor?: string } & JournalFilters;
      return tenantStub(c.env, principal.tenantId).journalList(type, { limit, cursor, filters });
    },
  });

  journalRoutes.openapi(
    createRoute({
      method: "get",
      path: item,
      tags,
      summary: `Get a ${noun}`,
      request: { params: JournalIdParam },
      responses: { 200: json(schemas.record, `The ${noun}`), 401: problems[401], 403: forbidden, 404: problems[404] },
      security,
    }),
    async (c) => {
      const principal = journalCaller(c, "journal:read");
      const result = await tenantStub(c.env, principal.tenantId).journalGet(type, c.req.valid("param").id);
      if (!result.ok) fail(result);
      return c.json(result.record, 200);
    },
  );

  journalRoutes.openapi(
    createRoute({
      method: "patch",
      path: item,
      tags,
      summary: `Change a ${noun}; \`version\` must be the current one (else 409 version_conflict)`,
      request: { params: JournalIdParam, ...jsonBody(schemas.patch) },
      responses: { 200: json(schemas.record, `The ${noun}`), 400: problems[400], 403: forbidden, 404: problems[404], 409: problems[409], 422: unprocessable },
      security,
    }),
    async (c) => {
      const principal = journalCaller(c, "journal:write");
      const result = await tenantStub(c.env, principal.tenantId).journalPatch(type, c.req.valid("param").id, c.req.valid("json"));
      if (!result.ok) fail(result);
      return c.json(result.record, 200);
    },
  );

  journalRoutes.openapi(
    createRoute({
      method: "delete",
      path: item,
      tags,
      summary: `Delete a ${noun} (soft; ?version= must be the current one; its checklists, items, time entries and ratings go with it)`,
      request: { params: JournalIdParam, query: JournalDeleteQuery },
      responses: { 200: json(schemas.record, `The tombstoned ${noun}`), 400: problems[400], 403: forbidden, 404: problems[404], 409: problems[409] },
      security,
    }),
    async (c) => {
      const principal = journalCaller(c, "journal:write");
      const result = await tenantStub(c.env, principal.tenantId).journalDelete(type, c.req.valid("param").id, c.req.valid("query").version);
      if (!result.ok) fail(result);
      return c.json(result.record, 200);
    },
  );
}

for (const type of JOURNAL_TYPES) registerKind(type);
