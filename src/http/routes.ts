import { ApiError } from "./api-error";
import { authenticate } from "./auth";
import { createRouter, toErrorResponse } from "./app";
import { requireJsonBodies } from "./content-type";
import { agentRoutes } from "../routes/agents";
import { benchRoutes } from "../routes/bench";
import { eventRoutes } from "../routes/events";
import { healthRoutes } from "../routes/health";
import { keyRoutes } from "../routes/keys";
import { messageRoutes } from "../routes/messages";
import { runRoutes } from "../routes/runs";
import { tenantRoutes } from "../routes/tenants";

/** The whole HTTP surface: public routes, operator routes, then everything behind tenant auth. */
export function buildApp() {
  const app = createRouter();
  app.use("*", requireJsonBodies({ exemptPrefixes: ["/v1/hooks/"] }));
  app.route("/", healthRoutes);
  app.route("/", tenantRoutes);

  const authed = createRouter();
  authed.use("*", authenticate());
  authed.route("/", keyRoutes);
  authed.route("/", agentRoutes);
  authed.route("/", messageRoutes);
  authed.route("/", eventRoutes);
  authed.route("/", runRoutes);
  authed.route("/", benchRoutes);
  app.route("/", authed);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", description: "API key (vk_…) or widget JWT" });
  app.openAPIRegistry.registerComponent("securitySchemes", "operator", { type: "http", scheme: "bearer", description: "VIGIL_ADMIN_TOKEN" });
  app.doc31("/v1/openapi.json", { openapi: "3.1.0", info: { title: "Vigil API", version: "1.0.0" } });

  app.notFound(() => {
    throw new ApiError("not_found", "no such route");
  });
  app.onError((error, c) => toErrorResponse(error, c.req.raw));
  return app;
}
