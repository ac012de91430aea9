import { z } from "@hono/zod-openapi";
import { Problem } from "../schema/common";

/** Request/response fragments shared by every route definition. */
export const jsonBody = <T extends z.ZodTypeAny>(schema: T) => ({
  body: { content: { "application/json": { schema } }, required: true },
});

export const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

export const problems = {
  400: { content: { "application/problem+json": { schema: Problem } }, description: "Invalid request" },
  401: { content: { "application/problem+json": { schema: Problem } }, description: "Missing or invalid credentials" },
  403: { content: { "application/problem+json": { schema: Problem } }, description: "Forbidden: the credential lacks the scope or kind this needs" },
  404: { content: { "application/problem+json": { schema: Problem } }, description: "Not found (also for other tenants' resources)" },
  409: { content: { "application/problem+json": { schema: Problem } }, description: "Conflict" },
  423: { content: { "application/problem+json": { schema: Problem } }, description: "brake_engaged: a brake stops new wakes of this agent" },
  429: { content: { "application/problem+json": { schema: Problem } }, description: "Rate limited; see Retry-After" },
} as const;

/** The 403 of the admin-only routes (policy, providers, brakes, audit, metrics). */
export const adminForbidden = { content: { "application/problem+json": { schema: Problem } }, description: "The credential is not an admin API key" } as const;

export const security = [{ bearer: [] as string[] }];

export const IdempotencyHeader = z.object({
  "idempotency-key": z.string().max(128).optional().openapi({ description: "Same key + same body → same response, no second effect" }),
});
