import { ApiError } from "./api-error";
import { authenticate } from "./auth";
import { createRouter, requireSecrets, toErrorResponse } from "./app";
import { requireJsonBodies } from "./content-type";
import { agentRoutes } from "../routes/agents/agents";
import { benchRoutes } from "../routes/platform/bench";
import { benchAlertnessRoutes } from "../routes/platform/bench-alertness";
import { eventRoutes } from "../routes/streams/events";
import { healthRoutes } from "../routes/platform/health";
import { keyRoutes } from "../routes/admin/keys";
import { messageRoutes } from "../routes/agents/messages";
import { chatRoutes } from "../routes/chat";
import { runRoutes } from "../routes/agents/runs";
import { decisionRoutes } from "../routes/agents/decisions";
import { reportRoutes } from "../routes/agents/reports";
import { memoryRoutes } from "../routes/agents/memory";
import { sessionRoutes } from "../routes/agents/sessions";
import { tenantRoutes } from "../routes/admin/tenants";
import { hookRoutes } from "../routes/streams/hooks";
import { journalRoutes } from "../routes/agents/journal";
import { subscriptionRoutes } from "../routes/agents/subscriptions";
import { tenantEventRoutes } from "../routes/streams/tenant-events";
import { timerRoutes } from "../routes/agents/timers";
import { triggerRoutes } from "../routes/agents/triggers";
import { webhookSourceRoutes } from "../routes/admin/webhook-sources";
import { webhookRoutes } from "../routes/admin/webhooks";
import { eventStreamRoutes } from "../routes/streams/events-stream";
import { cors } from "./cors";
import { applyOperationIds } from "./operation-ids";
import { applyContractStatuses } from "../routes/openapi-contract";
import { toolRoutes } from "../routes/admin/tools";
import { mcpServerRoutes } from "../routes/admin/mcp-servers";
import { docsRoutes } from "../routes/platform/docs";
import { widgetRoutes } from "../routes/platform/widget";
import { consoleRoutes } from "../routes/platform/console";
import { observabilityRoutes } from "../routes/admin/observability";
import { brakeRoutes } from "../routes/admin/brakes";
import { usageRoutes } from "../routes/agents/usage";
import { policyRoutes } from "../routes/admin/policy";
import { providerRoutes } from "../routes/admin/providers";
import { debugRoutes } from "../routes/platform/debug";
import { mcpRoutes } from "../routes/platform/mcp";
import { wellKnownRoutes } from "../routes/platform/well-known";

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
  app.route("/", wellKnownRoutes);
  app.route("/", consoleRoutes);

  const authed = createRouter();
  authed.use("*", authenticate());
  authed.route("/", keyRoutes);
  authed.route("/", agentRoutes);
  authed.route("/", messageRoutes);
  authed.route("/", chatRoutes);
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
  applyContractStatuses(app);

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
export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "Vigil API", version: "1.0.0", license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } },
  // Relative to the document's own URL: every deployment serves the API where it serves /v1/openapi.json.
  servers: [{ url: "/", description: "This deployment" }],
};
