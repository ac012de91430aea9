import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/api-error";
import { tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { Policy, PolicyWrite } from "../../schema/admin/policy";
import { adminForbidden, json, jsonBody, problems, security } from "../openapi-helpers";

/** GET|PUT /v1/policy: the tenant's governance policy (admin API keys only). */
export const policyRoutes = createRouter();

policyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/policy",
    summary: "The tenant's current governance policy (version 0 is the empty default)",
    responses: { 200: json(Policy, "The current policy"), 401: problems[401], 403: adminForbidden },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const policy = await tenantStub(c.env, principal.tenantId).getPolicy();
    return c.json(policy, 200);
  },
);

policyRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/policy",
    summary: "Replace the governance policy; each change becomes the next version and is audited",
    description:
      "Provider endpoints (`openai`, `anthropic`, `workers-ai` by their own id; any other id is an openai-compatible endpoint with a `baseUrl`), the models allowed per category, default budgets, tool quotas and rate limits, decision timeouts. `secretRefId` must name a live provider secret stored for that endpoint id. A body equal to the current policy changes nothing (same version). `If-Match: <version>` (or the body's `version`, as GET returned it) refuses the write with 409 `version_conflict` when the policy moved on; `updatedAt` is ignored, so the document GET returns can be written back.",
    request: {
      ...jsonBody(PolicyWrite),
      headers: z.object({ "if-match": z.string().regex(/^"?\d{1,9}"?$/, "a policy version number").optional().openapi({ description: "The version this write is based on" }) }),
    },
    responses: { 200: json(Policy, "The policy now in force"), 400: problems[400], 401: problems[401], 403: adminForbidden, 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const ifMatch = c.req.valid("header")["if-match"];
    const { version, updatedAt: _kept, ...policy } = c.req.valid("json");
    const headerVersion = ifMatch === undefined ? undefined : Number(ifMatch.replace(/"/g, ""));
    if (headerVersion !== undefined && version !== undefined && headerVersion !== version) {
      throw new ApiError("version_conflict", `If-Match says version ${headerVersion}, the body says ${version}: send one`);
    }
    const result = await tenantStub(c.env, principal.tenantId).putPolicy(`key:${principal.keyId}`, policy, headerVersion ?? version);
    if (!result.ok) throw new ApiError(result.code, result.message, result.fields ? { fields: result.fields } : {});
    return c.json(result.policy, 200);
  },
);
