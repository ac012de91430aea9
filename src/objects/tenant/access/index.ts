// Access: the tenant record, API keys, client authentication, idempotency records.
// The feature's public face: code outside this folder imports the feature only through this file.
export { lostSecret, TenantAccess } from "./access";
export { type AuthOutcome, ClientAuth } from "./client-auth";
export { type IdempotencyBegin, IdempotencyStore } from "./idempotency";
export { ApiKeys, hashApiKey, tenantIdOfApiKey } from "./keys";
export { readTenant } from "./tenant-record";
export { joinRegistryOnce, REGISTERED_NOTE, type RegisteredTenant, TENANT_REGISTRY_OBJECT, TenantRegistry } from "./registry";
