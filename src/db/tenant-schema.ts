/**
 * The tenant Durable Object's database schema: one drizzle schema (drizzle.tenant.config.ts, migrations/tenant), kept
 * in one file per feature of the TenantDO (src/objects/tenant/<feature>/) and read as one module.
 */
export * from "./tenant/access";
export * from "./tenant/directory";
export * from "./tenant/journal";
export * from "./tenant/alertness";
export * from "./tenant/governance";
export * from "./tenant/tools";
export * from "./tenant/channels";
export { counters } from "./common-schema";
