import { createRoute, z } from "@hono/zod-openapi";
import { tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { restoreDoCalls, takeDoCalls } from "../../objects/shared/call-meter";
import { IsoTimestamp } from "../../schema/common";
import { adminListRoute } from "../list-route";
import { adminForbidden, problems, security } from "../openapi-helpers";

/** GET /v1/audit and GET /v1/metrics: the tenant's audit log and counters (admin API keys only). */
export const observabilityRoutes = createRouter();

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

adminListRoute(observabilityRoutes, {
  path: "/v1/audit",
  summary: "The tenant's append-only audit log, newest first",
  item: AuditEntry,
  pageDescription: "Audit entries",
  read: (tenant, query) => tenant.listAuditPage(query),
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
      403: adminForbidden,
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
