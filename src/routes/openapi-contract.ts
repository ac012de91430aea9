import type { OpenAPIHono } from "@hono/zod-openapi";
import { Problem } from "../schema/common";

/** The routes anyone may call without a credential (each checks its own: a signature, nothing at all). */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  "GET /healthz",
  "POST /v1/hooks/t/{triggerId}",
  "POST /v1/hooks/s/{sourceId}",
  "GET /docs",
  "GET /widget.js",
  "GET /demo",
  "GET /console",
  "GET /console/app.js",
  "GET /console/app.css",
]);

const problem = (description: string) => ({ content: { "application/problem+json": { schema: Problem } }, description });

/** The problems the shared middleware can answer, whatever the route's handler does. */
const SHARED = {
  400: problem("validation_failed / invalid_json: the request does not match this operation's schema"),
  401: problem("Missing or invalid credentials"),
  403: problem("forbidden: the credential lacks the scope, agent or kind this needs"),
  404: problem("not_found: no such resource (also for other tenants' resources)"),
  409: problem("idempotency_conflict / idempotency_in_progress: the Idempotency-Key was used with another body, or is in flight"),
  410: problem("agent_destroyed: the agent was destroyed; nothing more can be done to it"),
  415: problem("unsupported_media_type: send the body as application/json"),
  429: problem("rate_limited: too many requests from this credential; see Retry-After"),
} as const;

interface RouteShape {
  method: string;
  path: string;
  security?: Array<Record<string, string[]>>;
  request?: { params?: unknown; query?: unknown; body?: { content?: Record<string, unknown> }; headers?: unknown };
  responses: Record<string, unknown>;
}

/**
 * Completes every documented operation with what the shared middleware makes true of it, so the document lists each
 * status an operation can return: public routes declare `security: []`; a credential brings 401, 403 and 429 (the
 * per-key limit); any input 400; a path parameter 404; a JSON body 415; an Idempotency-Key 409; a change to an agent 409
 * (its lifecycle) and 410 (destroyed). A route's own entry
 * (with its specific description) wins. Call after the last `route()`.
 */
export function applyContractStatuses(app: OpenAPIHono<any>): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    completeRoute(definition.route as unknown as RouteShape);
  }
}

function completeRoute(route: RouteShape): void {
  const key = `${route.method.toUpperCase()} ${route.path}`;
  if (route.security === undefined && PUBLIC_ROUTES.has(key)) route.security = [];
  const add = (status: keyof typeof SHARED) => void (route.responses[status] ??= SHARED[status]);
  const request = route.request ?? {};
  const authenticated = (route.security?.length ?? 0) > 0;
  if (authenticated) {
    add(401);
    add(429);
    if (!route.path.startsWith("/v1/tenants")) add(403);
  }
  if (request.params !== undefined || request.query !== undefined || request.body !== undefined) add(400);
  if (request.params !== undefined && /\{[^}]+\}/.test(route.path)) add(404);
  if (request.body?.content?.["application/json"] !== undefined) add(415);
  if (hasIdempotencyKey(request.headers)) add(409);
  if (route.path.startsWith("/v1/agents/{id}") && route.method.toLowerCase() !== "get") {
    add(410);
    route.responses[409] ??= problem("agent_dormant / invalid_transition: the agent's lifecycle does not allow this now");
  }
}

function hasIdempotencyKey(headers: unknown): boolean {
  const shape = (headers as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape !== undefined && "idempotency-key" in shape;
}
