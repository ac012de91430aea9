import { z } from "@hono/zod-openapi";
import { config, SCOPES } from "../../config";
import { IsoTimestamp, ResourceId } from "../common";

export const Scope = z.enum(SCOPES);

export const CreateTenantBody = z
  .object({
    name: z.string().trim().min(1).max(120),
    timeZone: z
      .string()
      .max(64)
      .refine((zone) => isValidTimeZone(zone), "must be an IANA time zone such as Europe/Berlin")
      .default("UTC"),
  })
  .strict()
  .openapi("CreateTenant");

export const Tenant = z
  .object({ id: z.string(), name: z.string(), timeZone: z.string(), createdAt: IsoTimestamp })
  .openapi("Tenant");
export type Tenant = z.infer<typeof Tenant>;

export const CreateTenantResponse = z.object({ tenant: Tenant, apiKey: z.string() }).openapi("CreateTenantResponse");

export const CreateKeyBody = z
  .object({
    name: z.string().trim().min(1).max(120).optional(),
    scopes: z.array(Scope).min(1).max(SCOPES.length).default([...SCOPES]),
  })
  .strict()
  .openapi("CreateKey");

export const ApiKeyInfo = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    prefix: z.string(),
    scopes: z.array(Scope),
    createdAt: IsoTimestamp,
    revokedAt: IsoTimestamp.nullable(),
  })
  .openapi("ApiKey");
export type ApiKeyInfo = z.infer<typeof ApiKeyInfo>;

export const CreateKeyResponse = z
  .object({ id: z.string(), key: z.string(), scopes: z.array(Scope) })
  .openapi("CreateKeyResponse");

export const MintTokenBody = z
  .object({
    sub: z.string().trim().min(1).max(200),
    agents: z.array(ResourceId).min(1).max(100),
    scope: z.array(z.enum(["agents:read", "agents:write"])).min(1).default(["agents:read", "agents:write"]),
    ttlSeconds: z.number().int().min(30).max(config.jwt.maxTtlSeconds).default(config.jwt.defaultTtlSeconds),
  })
  .strict()
  .openapi("MintToken");

export const MintTokenResponse = z.object({ token: z.string(), expiresAt: IsoTimestamp }).openapi("MintTokenResponse");

function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
