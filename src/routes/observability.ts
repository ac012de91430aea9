import { createRoute, z } from "@hono/zod-openapi";
import { tenantStub, requireAdminKey } from "../http/auth";
import { createRouter } from "../http/app";
import { restoreDoCalls, takeDoCalls } from "../objects/shared/call-meter";
import { IsoTimestamp, Problem } from "../schema/common";
import { listRoute } from "./list-route";
import { json, problems, security } from "./openapi-helpers";

/** GET /v1/audit and GET /v1/metrics: the tenant's audit log and counters (admin API keys only). */
export const observabilityRoutes = createRouter();

const forbidden = { content: { "application/problem+json": { schema: Problem } }, description: "The credential is not an admin API key" } as const;

export const AuditEntry = z
  .object({
    seq: z.number().int(),
    at: IsoTimestamp,
    actor: z.string().openapi({ description: "Who acted, e.g. `operator`, `key:<id>`, `agent:<id>`" }),
    action: z.string().openapi({ example: "key.created" }),
    target: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()),
  })
  .openapi("AuditEntry");

listRoute(observabilityRoutes, {
  path: "/v1/audit",
  summary: "The tenant's append-only audit log, newest first",
  item: AuditEntry,
  pageDescription: "Audit entries",
  errors: { 400: problems[400], 401: problems[401], 403: forbidden },
  read: (c, { query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listAuditPage(query),
  cursorField: true,
});

observabilityRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/metrics",
    summary: "Per-tenant counters in the Prometheus text exposition format",
    description: "Runs by outcome, wakes by reason, tool calls, tokens by direction, decisions by status, and `vigil_do_calls_total{object,method}`: Durable Object calls made for the tenant, counted at the stub boundary.",
    responses: {
      200: { content: { "text/plain; version=0.0.4": { schema: z.string() } }, description: "Prometheus text format 0.0.4" },
      401: problems[401],
      403: forbidden,
    },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    // The DO calls this isolate counted for the tenant ride on the read that shows them (no call of their own).
    const stub = tenantStub(c.env, principal.tenantId);
    const calls = takeDoCalls(principal.tenantId);
    const body = await stub.metricsText(calls).catch((error: unknown) => {
      restoreDoCalls(principal.tenantId, calls);
      throw error;
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } }) as never;
  },
);
