import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/app";
import { json } from "../openapi-helpers";

export const healthRoutes = createRouter();

healthRoutes.openapi(
  createRoute({
    method: "get",
    path: "/healthz",
    summary: "Liveness",
    responses: { 200: json(z.object({ ok: z.literal(true), service: z.literal("vigil") }), "Alive") },
  }),
  (c) => c.json({ ok: true as const, service: "vigil" as const }, 200),
);
