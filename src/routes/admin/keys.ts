import { keyringFromEnv } from "../../core/egress/keyring";
import { createRoute, z } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { forgetRevokedKey, requireApiKey, requireScope, tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { actorOf } from "../../http/context";
import { idempotent, requestKeyedId } from "../../http/idempotency";
import { mintWidgetToken } from "../../http/jwt";
import { ApiKeyInfo, CreateKeyBody, CreateKeyResponse, MintTokenBody, MintTokenResponse } from "../../schema/admin/auth";
import { ResourceId } from "../../schema/common";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

export const keyRoutes = createRouter();
keyRoutes.post("/v1/keys", idempotent({ sealed: true }));
keyRoutes.post("/v1/tokens", idempotent({ sealed: true }));

keyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/keys",
    summary: "Create an API key (the secret is returned once)",
    request: { ...jsonBody(CreateKeyBody), headers: IdempotencyHeader },
    responses: { 201: json(CreateKeyResponse, "The new key"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const body = c.req.valid("json");
    const created = await tenantStub(c.env, principal.tenantId).createKey(actorOf(principal), body.name ?? null, body.scopes, requestKeyedId(c, principal.tenantId, "key_", body));
    if (!created.ok) fail(created);
    return c.json({ id: created.id, key: created.key, scopes: created.scopes }, 201);
  },
);

keyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/keys",
    summary: "List API keys (never their secrets)",
    responses: { 200: json(z.object({ data: z.array(ApiKeyInfo), nextCursor: z.null() }), "Keys"), 401: problems[401] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    return c.json({ data: await tenantStub(c.env, principal.tenantId).listKeys(), nextCursor: null }, 200);
  },
);

keyRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/keys/{id}",
    summary: "Revoke an API key (effective immediately)",
    request: { params: z.object({ id: ResourceId }) },
    responses: { 200: json(ApiKeyInfo, "The revoked key"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).revokeKey(actorOf(principal), c.req.valid("param").id);
    if (!result.ok) fail(result);
    forgetRevokedKey(principal.tenantId, result.key.id);
    return c.json(result.key, 200);
  },
);

keyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/tokens",
    summary: "Mint a short-lived widget JWT limited to some agents",
    request: { ...jsonBody(MintTokenBody), headers: IdempotencyHeader },
    responses: { 201: json(MintTokenResponse, "The token"), 400: problems[400], 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:write");
    const body = c.req.valid("json");
    const tenant = tenantStub(c.env, principal.tenantId);
    for (const agentId of body.agents) {
      if (!(await tenant.hasAgent(agentId))) fail({ code: "not_found", message: `agent ${agentId} not found` });
    }
    const minted = await mintWidgetToken(keyringFromEnv(c.env), { sub: body.sub, tid: principal.tenantId, agents: body.agents, scope: body.scope }, body.ttlSeconds);
    return c.json(minted, 201);
  },
);
