import { ApiError } from "./api-error";
import { authenticate } from "./auth";
import { createRouter, requireSecrets, toErrorResponse } from "./app";
import { requireJsonBodies } from "./content-type";
import { agentRoutes } from "../routes/agents";
import { benchRoutes } from "../routes/bench";
import { benchAlertnessRoutes } from "../routes/bench-alertness";
import { eventRoutes } from "../routes/events";
import { healthRoutes } from "../routes/health";
import { keyRoutes } from "../routes/keys";
import { messageRoutes } from "../routes/messages";
import { runRoutes } from "../routes/runs";
import { decisionRoutes } from "../routes/decisions";
import { reportRoutes } from "../routes/reports";
import { memoryRoutes } from "../routes/memory";
import { sessionRoutes } from "../routes/sessions";
import { tenantRoutes } from "../routes/tenants";
import { hookRoutes } from "../routes/hooks";
import { journalRoutes } from "../routes/journal";
import { subscriptionRoutes } from "../routes/subscriptions";
import { tenantEventRoutes } from "../routes/tenant-events";
import { timerRoutes } from "../routes/timers";
import { triggerRoutes } from "../routes/triggers";
import { webhookSourceRoutes } from "../routes/webhook-sources";
import { webhookRoutes } from "../routes/webhooks";
import { eventStreamRoutes } from "../routes/events-stream";
import { cors } from "./cors";
import { applyOperationIds } from "./operation-ids";
import { toolRoutes } from "../routes/tools";
import { mcpServerRoutes } from "../routes/mcp-servers";
import { docsRoutes } from "../routes/docs";
import { widgetRoutes } from "../routes/widget";
import { observabilityRoutes } from "../routes/observability";
import { brakeRoutes } from "../routes/brakes";
import { usageRoutes } from "../routes/usage";
import { policyRoutes } from "../routes/policy";
import { providerRoutes } from "../routes/providers";
import { debugRoutes } from "../routes/debug";
import { mcpRoutes } from "../routes/mcp";

/** The whole HTTP surface: public routes, operator routes, then everything behind tenant auth. */
export function buildApp() {
  const app = createRouter();
  // CORS first: preflights are answered before body checks and authentication.
  app.use("/v1/*", cors());
  app.use("/v1/*", requireSecrets());
  app.use("*", requireJsonBodies({ exemptPrefixes: ["/v1/hooks/"] }));
  app.route("/", healthRoutes);
  app.route("/", tenantRoutes);
  app.route("/", hookRoutes);
  app.route("/", docsRoutes);
  app.route("/", debugRoutes);
  app.route("/", widgetRoutes);

  const authed = createRouter();
  authed.use("*", authenticate());
  authed.route("/", keyRoutes);
  authed.route("/", agentRoutes);
  authed.route("/", messageRoutes);
  authed.route("/", eventRoutes);
  authed.route("/", runRoutes);
  authed.route("/", reportRoutes);
  authed.route("/", memoryRoutes);
  authed.route("/", sessionRoutes);
  authed.route("/", decisionRoutes);
  authed.route("/", journalRoutes);
  authed.route("/", subscriptionRoutes);
  authed.route("/", tenantEventRoutes);
  authed.route("/", timerRoutes);
  authed.route("/", triggerRoutes);
  authed.route("/", webhookSourceRoutes);
  authed.route("/", webhookRoutes);
  authed.route("/", eventStreamRoutes);
  authed.route("/", toolRoutes);
  authed.route("/", mcpServerRoutes);
  authed.route("/", observabilityRoutes);
  authed.route("/", brakeRoutes);
  authed.route("/", usageRoutes);
  authed.route("/", policyRoutes);
  authed.route("/", providerRoutes);
  authed.route("/", mcpRoutes);
  authed.route("/", benchRoutes);
  authed.route("/", benchAlertnessRoutes);
  // Public routes are registered before the authenticated sub-app, whose `*` middleware would catch them.
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", description: "API key (vk_…) or widget JWT" });
  app.openAPIRegistry.registerComponent("securitySchemes", "operator", { type: "http", scheme: "bearer", description: "VIGIL_ADMIN_TOKEN" });
  app.doc31("/v1/openapi.json", OPENAPI_DOCUMENT);
  app.route("/", authed);
  applyOperationIds(app);

  app.notFound(() => {
    throw new ApiError("not_found", "no such route");
  });
  app.onError((error, c) => toErrorResponse(error, c.req.raw));
  return app;
}

/**
 * The OpenAPI document's header, served at GET /v1/openapi.json. scripts/gen-client.mjs builds the same
 * document with `buildApp().getOpenAPI31Document(OPENAPI_DOCUMENT)` — directly, not through the
 * middleware (which may need bindings the generator does not have).
 */
export const OPENAPI_DOCUMENT = { openapi: "3.1.0", info: { title: "Vigil API", version: "1.0.0" } };
