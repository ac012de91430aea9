import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/api-error";
import { forgetErasedTenant, requireOperator, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { fail } from "../../http/api-error";
import { idempotent, requestKeyedId } from "../../http/idempotency";
import { lostSecret } from "../../objects/tenant/access";
import { randomId } from "../../ids";
import { CreateTenantBody, CreateTenantResponse } from "../../schema/admin/auth";
import { IdempotencyHeader, json, jsonBody, problems } from "../openapi-helpers";
import { OPERATOR_AUDIT_OBJECT } from "../../objects/tenant/directory";
import { TENANT_REGISTRY_OBJECT } from "../../objects/tenant/access";
import { rememberTenant } from "../../http/tenant-gate";
import { page, PaginationQuery } from "../../schema/common";

const OPERATOR_SCOPE = "operator";

export const tenantRoutes = createRouter();

tenantRoutes.use("/v1/tenants", requireOperator());
tenantRoutes.use("/v1/tenants/*", requireOperator());
tenantRoutes.post("/v1/tenants", idempotent({ storeIn: () => OPERATOR_SCOPE, sealed: true }));

tenantRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/tenants",
    summary: "Create a tenant (operator); returns its first API key once",
    request: { ...jsonBody(CreateTenantBody), headers: IdempotencyHeader },
    responses: { 201: json(CreateTenantResponse, "The tenant and its first API key"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const body = c.req.valid("json");
    // Under an Idempotency-Key the id derives from it: a retry after a lapsed claim meets the tenant its first attempt
    // created (or erased since) instead of creating a second one; its first API key cannot be shown again (409).
    const keyedId = requestKeyedId(c, OPERATOR_SCOPE, "t", body, 16);
    const tenantId = keyedId ?? randomId("t", 16);
    if (keyedId && (await tenantStub(c.env, OPERATOR_AUDIT_OBJECT).findAudit("tenant.erased", keyedId))) fail(lostSecret(`tenant ${keyedId} (erased since)`, "nothing is left to undo"));
    // The registry first: a tenant object never holds a tenant the registry lacks (a registered id whose create then
    // failed only makes the Worker ask that object, which answers "unknown").
    const registry = tenantStub(c.env, TENANT_REGISTRY_OBJECT);
    await registry.registryRecord({ id: tenantId, name: body.name, createdAt: new Date().toISOString() });
    const result = await tenantStub(c.env, tenantId).initTenant(tenantId, body.name, body.timeZone);
    if (!result.ok && keyedId && result.code === "conflict") fail(lostSecret(`tenant ${keyedId}`, `erase it (DELETE /v1/tenants/${keyedId}) if it is unused`));
    if (!result.ok) fail(result);
    await registry.registryRecord({ id: tenantId, name: result.tenant.name, createdAt: result.tenant.createdAt });
    rememberTenant(c.env, tenantId);
    return c.json({ tenant: result.tenant, apiKey: result.apiKey }, 201);
  },
);

const TenantIdParam = z.object({ id: z.string().min(1).max(64).openapi({ param: { name: "id", in: "path" }, example: "t0123456789abcdef" }) });
const TENANT_ID = /^t[0-9a-z]{16}$/;
const TenantErasure = z
  .object({ tenantId: z.string(), erasedAt: z.string(), agentsErased: z.int() })
  .openapi("TenantErasure", { description: "What was erased; the record is kept in the operator audit, outside the tenant" });
const ErasureRecord = z
  .object({ tenantId: z.string(), erasedAt: z.string(), actor: z.string(), detail: z.record(z.string(), z.unknown()) })
  .openapi("TenantErasureRecord");

tenantRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/tenants/{id}",
    summary: "Erase a tenant for real (operator): every agent and its SQLite, the journal, keys, policies, audit — everything; the erasure record survives in the operator audit",
    request: { params: TenantIdParam },
    responses: { 200: json(TenantErasure, "The tenant is gone"), 401: problems[401], 404: problems[404] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    if (!TENANT_ID.test(id)) throw new ApiError("not_found", "tenant not found");
    const result = await tenantStub(c.env, id).eraseTenant("operator");
    if (!result.ok) fail(result);
    await tenantStub(c.env, TENANT_REGISTRY_OBJECT).registryRemove(id);
    forgetErasedTenant(id);
    return c.json(result.erasure, 200);
  },
);

tenantRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/tenants/{id}/erasure",
    summary: "The operator audit record of a tenant's erasure (operator)",
    request: { params: TenantIdParam },
    responses: { 200: json(ErasureRecord, "When and by whom the tenant was erased, and row counts"), 401: problems[401], 404: problems[404] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const entry = TENANT_ID.test(id) ? await tenantStub(c.env, OPERATOR_AUDIT_OBJECT).findAudit("tenant.erased", id) : null;
    if (!entry) throw new ApiError("not_found", "no erasure recorded for this tenant");
    return c.json({ tenantId: id, erasedAt: entry.at, actor: entry.actor, detail: entry.detail }, 200);
  },
);

const RegisteredTenant = z
  .object({ id: z.string(), name: z.string(), createdAt: z.string() })
  .openapi("RegisteredTenant", { description: "A tenant as the platform registry holds it" });

tenantRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/tenants",
    summary: "List the platform's tenants (operator), by id, from the tenant registry",
    request: { query: PaginationQuery },
    responses: { 200: json(page(RegisteredTenant), "One page of tenants"), 400: problems[400], 401: problems[401] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    if (cursor !== undefined && !TENANT_ID.test(cursor)) throw new ApiError("validation_failed", "cursor: not a cursor of this list", { fields: [{ path: "cursor", message: "invalid" }] });
    const listed = await tenantStub(c.env, TENANT_REGISTRY_OBJECT).registryList(limit, cursor);
    return c.json({ data: listed.data, nextCursor: listed.next }, 200);
  },
);

tenantRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/tenants/{id}/registration",
    summary: "Record an existing tenant in the platform registry (operator; for tenants created before the registry)",
    description: "Asks the tenant's own object whether it holds the tenant; a tenant that starts for any reason also joins by itself.",
    request: { params: TenantIdParam },
    responses: { 200: json(RegisteredTenant, "The tenant is registered"), 401: problems[401], 404: problems[404] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const tenant = TENANT_ID.test(id) ? await tenantStub(c.env, id).getTenant() : null;
    if (!tenant) throw new ApiError("not_found", "tenant not found");
    const entry = { id: tenant.id, name: tenant.name, createdAt: tenant.createdAt };
    await tenantStub(c.env, TENANT_REGISTRY_OBJECT).registryRecord(entry);
    rememberTenant(c.env, tenant.id);
    return c.json(entry, 200);
  },
);
